# expect: should have dtype numpy.float32
"""Converts the input to float64 first, so float32 logits come back as float64."""
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
