# expect: True at the PAD tokens
"""Marks the PAD positions (seed 000's meaning: 1 = hidden) instead of the real tokens."""
import numpy as np


def make_pad_mask(tokens, pad_id=0):
    is_pad = tokens == pad_id
    return is_pad[:, np.newaxis, np.newaxis, :]


def make_causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool))
