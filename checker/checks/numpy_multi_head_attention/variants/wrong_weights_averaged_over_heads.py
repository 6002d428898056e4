# expect: axis H of (B, H, T_q, T_k) is missing
"""The weights returned are averaged over the heads, one (T_q, T_k) map per batch item, as nn.MultiheadAttention's
need_weights=True gives by default (average_attn_weights=True): the contract returns every head's."""
import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        weights = softmax(scores, axis=-1)
    if mask is not None:
        weights = np.where(mask, weights, 0.0)
    return weights @ v, weights


def split_heads(x, num_heads, depth):
    B, T, _ = x.shape
    return x.reshape(B, T, num_heads, depth).transpose(0, 2, 1, 3)


def combine_heads(x):
    B, H, T, depth = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * depth)


def multi_head_attention(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo):
    depth = d_model // num_heads
    out, weights = scaled_dot_product_attention(split_heads(q @ Wq, num_heads, depth),
                                                split_heads(k @ Wk, num_heads, depth),
                                                split_heads(v @ Wv, num_heads, depth), mask)
    return combine_heads(out) @ Wo, weights.mean(axis=1)
