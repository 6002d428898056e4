# expect: uses base 1000
"""A typo in the base: 1000 instead of 10000."""
import numpy as np


def positional_encoding(position, d_model):
    pos = np.arange(position)[:, None]
    div_term = np.exp(np.arange(0, d_model, 2) * -(np.log(1000.0) / d_model))
    pe = np.zeros((position, d_model))
    pe[:, 0::2] = np.sin(pos * div_term)
    pe[:, 1::2] = np.cos(pos * div_term[: d_model // 2])
    return pe[np.newaxis]
