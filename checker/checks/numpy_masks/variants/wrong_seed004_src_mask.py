# expect: the PyTorch notebook tutorial's make_src_mask
"""Seed 004's make_src_mask: (tokens != pad).unsqueeze(-2), i.e. (B, 1, T)."""
import numpy as np


def make_pad_mask(tokens, pad_id=0):
    return np.expand_dims(tokens != pad_id, -2)


def make_causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool))
