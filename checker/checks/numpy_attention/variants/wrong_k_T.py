# expect: k.T reverses all of them
"""Seed 002's 2-D version, np.dot(Q, K.T): right for (T, d) arrays only."""
import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = np.dot(q, k.T) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.nan_to_num(softmax(scores))
    return np.dot(weights, v), weights
