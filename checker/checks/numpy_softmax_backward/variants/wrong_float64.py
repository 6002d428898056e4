# expect: float32 inputs give a float64 dx
"""Converts y to float64 first, so float32 inputs come back as float64."""
import numpy as np


def softmax_backward(dy, y, axis=-1):
    y = np.asarray(y, dtype=float)
    return y * (dy - np.sum(dy * y, axis=axis, keepdims=True))
