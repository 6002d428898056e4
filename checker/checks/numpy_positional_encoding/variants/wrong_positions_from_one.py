# expect: your positions start at 1
"""Counts positions 1..position instead of 0..position-1."""
import numpy as np


def positional_encoding(position, d_model):
    pos = np.arange(1, position + 1)[:, None]
    i = np.arange(d_model)[None, :] // 2
    angles = pos / 10000 ** (2 * i / d_model)
    pe = np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))
    return pe[None]
