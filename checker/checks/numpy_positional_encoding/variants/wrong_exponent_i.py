# expect: your exponent is i/d_model
"""Forgets the 2 in 10000^(2i/d_model)."""
import numpy as np


def positional_encoding(position, d_model):
    pos = np.arange(position)[:, None]
    i = np.arange(d_model)[None, :] // 2
    angles = pos / 10000 ** (i / d_model)
    pe = np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))
    return pe[None]
