# expect: should have dtype bool
"""Right values, but 0/1 floats instead of bool."""
import numpy as np


def make_pad_mask(tokens, pad_id=0):
    return (tokens != pad_id).astype(np.float32)[:, None, None, :]


def make_causal_mask(T):
    return np.tril(np.ones((T, T)))
