# expect: pass keepdims=True to np.max and np.sum
"""Keeps the axis for the max but forgets keepdims on the sum."""
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis)
