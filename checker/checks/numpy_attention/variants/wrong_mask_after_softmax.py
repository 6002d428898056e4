# expect: mask the scores before softmax
"""Softmax first, then zero the hidden weights: rows no longer sum to 1."""
import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    weights = softmax(q @ k.swapaxes(-2, -1) / math.sqrt(q.shape[-1]))
    if mask is not None:
        weights = weights * mask
    return weights @ v, weights
