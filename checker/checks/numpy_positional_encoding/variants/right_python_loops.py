"""Two plain loops and the math module: slow, but exactly the formula."""
import math

import numpy as np


def positional_encoding(position, d_model):
    pe = np.empty((1, position, d_model))
    for pos in range(position):
        for j in range(d_model):
            angle = pos / math.pow(10000, (j - j % 2) / d_model)
            pe[0, pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return pe
