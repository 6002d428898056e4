# expect: whatever pad_id says
"""Assumes PAD is always id 0."""
import numpy as np


def make_pad_mask(tokens, pad_id=0):
    return (tokens > 0)[:, None, None, :]


def make_causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool))
