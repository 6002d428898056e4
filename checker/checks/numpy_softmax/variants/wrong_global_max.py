# expect: max of the WHOLE array
"""Stable-looking, but it subtracts np.max(x) over the whole array, not each slice's own max."""
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / e.sum(axis=axis, keepdims=True)
