"""np.apply_along_axis over 1-D slices: slow but correct."""
import numpy as np


def _softmax_1d(row):
    e = np.exp(row - row.max())
    return e / e.sum()


def softmax(x, axis=-1):
    return np.apply_along_axis(_softmax_1d, axis, x)
