"""Comparisons of position indices, and expand_dims for the broadcast axes."""
import numpy as np


def make_pad_mask(tokens, pad_id=0):
    B, T = tokens.shape
    return np.not_equal(tokens, pad_id).reshape(B, 1, 1, T)


def make_causal_mask(T):
    positions = np.arange(T)
    return positions[None, :] <= positions[:, None]  # key j <= query i
