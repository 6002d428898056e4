# expect: should have dtype numpy.float32
"""Sums in float64 for accuracy (np.sum(..., dtype=np.float64)): the division promotes float32 logits to float64."""
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))  # shift by each slice's max: exp <= 1
    return e / np.sum(e, axis=axis, keepdims=True, dtype=np.float64)  # float32 / float64 -> float64
