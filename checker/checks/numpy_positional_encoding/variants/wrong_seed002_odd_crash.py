# expect: with an odd d_model your code raised
"""Seed 002's div_term version (with the batch axis added): one frequency per sin column, so an odd d_model crashes."""
import numpy as np


def positional_encoding(position, d_model):
    pe = np.zeros((position, d_model))
    pos = np.arange(0, position)[:, np.newaxis]
    div_term = np.exp(np.arange(0, d_model, 2) * -(np.log(10000.0) / d_model))
    pe[:, 0::2] = np.sin(pos * div_term)
    pe[:, 1::2] = np.cos(pos * div_term)
    return pe[np.newaxis]
