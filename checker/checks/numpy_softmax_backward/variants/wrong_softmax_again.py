# expect: y is already the softmax OUTPUT
"""Treats y as the logits and applies softmax to it again before the (correct) formula."""
import numpy as np


def softmax_backward(dy, y, axis=-1):
    e = np.exp(y - y.max(axis=axis, keepdims=True))
    s = e / e.sum(axis=axis, keepdims=True)
    return s * (dy - np.sum(dy * s, axis=axis, keepdims=True))
