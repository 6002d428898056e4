# expect: you return the scores before the softmax as the weights
"""scaled_dot_product_attention returns the masked scores, not the softmax weights, so multi_head_attention passes them on."""
import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])  # (..., T_q, T_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ v, scores


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
