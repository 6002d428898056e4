# expect: you add +1e9 to the hidden scores
"""Converts seed 000's additive mask to True = visible but drops the minus sign."""
import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.swapaxes(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + np.where(mask, 0.0, 1e9).astype(scores.dtype)
    weights = softmax(scores)
    return weights @ v, weights
