# expect: a hidden key
"""Masks by multiplying the scores by the mask: a hidden score becomes 0, not -inf, and still gets weight."""
import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.swapaxes(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores * mask
    weights = softmax(scores)
    return weights @ v, weights
