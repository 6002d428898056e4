# expect: multiplies pos by 10000^(2i/d_model)
"""The log-space div_term without its minus sign: frequencies grow instead of shrinking."""
import math

import numpy as np


def positional_encoding(position, d_model):
    pos = np.arange(position)[:, None]
    div_term = np.exp(np.arange(0, d_model, 2) * (math.log(10000.0) / d_model))
    pe = np.zeros((position, d_model))
    pe[:, 0::2] = np.sin(pos * div_term)
    pe[:, 1::2] = np.cos(pos * div_term[: d_model // 2])
    return pe[np.newaxis]
