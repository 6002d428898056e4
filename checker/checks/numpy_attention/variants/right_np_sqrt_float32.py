# followup: float64
"""Right in float64, but np.sqrt(d_k) turns float32 inputs into a float64 result."""
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = q.shape[-1]
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        weights = softmax(scores)
    if mask is not None:
        weights = np.where(mask, weights, 0.0)
    return np.matmul(weights, v), weights
