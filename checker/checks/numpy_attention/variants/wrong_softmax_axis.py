# expect: the axis a reduction, softmax, cumsum or concatenation runs over
"""Softmax over axis -2 (the queries) instead of the keys."""
import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.swapaxes(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        weights = softmax(scores, axis=-2)
    if mask is not None:
        weights = np.where(mask, weights, 0.0)
    return weights @ v, weights
