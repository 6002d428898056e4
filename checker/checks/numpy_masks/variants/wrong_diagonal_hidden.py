# expect: hides the diagonal
"""Strictly lower triangle: a position cannot see itself."""
import numpy as np


def make_pad_mask(tokens, pad_id=0):
    return (tokens != pad_id)[:, None, None, :]


def make_causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool), k=-1)
