# expect: without keepdims=True the sum loses its axis
"""Forgets keepdims on the sum: broadcasts against the wrong axis."""
import numpy as np


def softmax_backward(dy, y, axis=-1):
    dot = np.sum(dy * y, axis=axis)
    return y * (dy - dot)
