# expect: modified its input
"""Subtracts the weighted sum from dy in place: the caller's dy changes."""
import numpy as np


def softmax_backward(dy, y, axis=-1):
    dy -= np.sum(dy * y, axis=axis, keepdims=True)
    return y * dy
