# expect: the batch axis is missing
"""Returns the (position, d_model) table, without the leading axis of size 1."""
import numpy as np


def positional_encoding(position, d_model):
    pos = np.arange(position)[:, None]
    i = np.arange(d_model)[None, :] // 2
    angles = pos / 10000 ** (2 * i / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))
