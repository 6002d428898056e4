# expect: a term dropped from a sum, or a factor from a product
"""Divides by the max instead of the sum."""
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.max(e, axis=axis, keepdims=True)
