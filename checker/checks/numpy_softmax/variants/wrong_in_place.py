# expect: modified its input
"""Subtracts the max in place: the caller's logits change."""
import numpy as np


def softmax(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)
    np.exp(x, out=x)
    return x / np.sum(x, axis=axis, keepdims=True)
