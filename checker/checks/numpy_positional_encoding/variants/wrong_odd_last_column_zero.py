# expect: your last column is 0
"""Fills column pairs (2i, 2i+1) for i < d_model // 2, so an odd d_model's last column stays 0."""
import numpy as np


def positional_encoding(position, d_model):
    pe = np.zeros((position, d_model))
    pos = np.arange(position)
    for i in range(d_model // 2):
        angle = pos / 10000 ** (2 * i / d_model)
        pe[:, 2 * i] = np.sin(angle)
        pe[:, 2 * i + 1] = np.cos(angle)
    return pe[np.newaxis]
