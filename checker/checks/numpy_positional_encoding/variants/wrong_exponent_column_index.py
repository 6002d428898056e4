# expect: use 2 * (j // 2), not j
"""Uses the column index j itself in the exponent, so odd columns get their own (wrong) frequency."""
import numpy as np


def positional_encoding(position, d_model):
    angles = np.arange(position)[:, None] / np.power(10000, np.arange(d_model)[None, :] / d_model)
    angles[:, 0::2] = np.sin(angles[:, 0::2])
    angles[:, 1::2] = np.cos(angles[:, 1::2])
    return angles[None]
