# expect: an argument replaced by a value written into the code
"""Takes `axis` but always sums over the last axis."""
import numpy as np


def softmax_backward(dy, y, axis=-1):
    dot = (dy * y).sum(axis=-1, keepdims=True)
    return y * (dy - dot)
