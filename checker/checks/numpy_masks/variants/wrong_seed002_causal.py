# expect: the paper walkthrough's create_causal_mask
"""Seed 002's create_causal_mask (1 = masked, as float) kept as is; the pad mask is right."""
import numpy as np


def make_pad_mask(tokens, pad_id=0):
    return (tokens != pad_id)[:, np.newaxis, np.newaxis, :]


def make_causal_mask(T):
    mask = np.triu(np.ones((T, T)), k=1)
    return mask
