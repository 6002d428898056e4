# expect: sin and cos swapped
"""cos in the even columns, sin in the odd ones."""
import numpy as np


def positional_encoding(position, d_model):
    pos = np.arange(position)[:, None]
    i = np.arange(d_model)[None, :] // 2
    angles = pos / 10000 ** (2 * i / d_model)
    pe = np.empty((position, d_model))
    pe[:, 0::2] = np.cos(angles[:, 0::2])
    pe[:, 1::2] = np.sin(angles[:, 1::2])
    return pe[None]
