# expect: your mask is inverted
"""Seed 000's additive mask (mask * -1e9, 1 = hidden) applied to a True = visible mask."""
import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    logits = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        logits = logits + (mask * -1e9).astype(logits.dtype)
    weights = softmax(logits, axis=-1)
    return weights @ v, weights
