"""Seeds 003/004 in NumPy: frequencies in log space, the cos columns take the first d_model // 2 of them."""
import math

import numpy as np


def positional_encoding(position, d_model):
    pe = np.zeros((position, d_model))
    pos = np.arange(position, dtype=np.float64)[:, np.newaxis]
    div_term = np.exp(np.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    pe[:, 0::2] = np.sin(pos * div_term)
    pe[:, 1::2] = np.cos(pos * div_term[: d_model // 2])
    return pe[np.newaxis, :, :]
