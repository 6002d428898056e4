# expect: a term dropped from a sum, or a factor from a product
"""Subtracts the weighted sum but forgets to multiply by y."""
import numpy as np


def softmax_backward(dy, y, axis=-1):
    return dy - np.sum(dy * y, axis=axis, keepdims=True)
