# followup: every score near -57000
"""GPT-2's finite fill, -1e4, for hidden keys: right while the real scores stay far above it."""
import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])  # (..., T_q, T_k)
    if mask is not None:
        scores = np.where(mask, scores, -1e4)  # GPT-2's fill
    weights = softmax(scores, axis=-1)
    return weights @ v, weights
