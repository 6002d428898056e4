# expect: without the factor y in front
"""Subtracts the weighted sum but forgets to multiply by y."""
import numpy as np


def softmax_backward(dy, y, axis=-1):
    return dy - np.sum(dy * y, axis=axis, keepdims=True)
