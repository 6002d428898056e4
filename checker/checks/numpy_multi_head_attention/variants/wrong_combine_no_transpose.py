# expect: combine_heads reshapes (B, H, T, depth) straight to
"""combine_heads reshapes (B, H, T, depth) straight to (B, T, d_model), with no transpose."""
import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


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
    x = x.reshape(x.shape[0], x.shape[1], num_heads, depth)
    return x.transpose(0, 2, 1, 3)


def combine_heads(x):
    B, H, T, depth = x.shape
    return x.reshape(B, T, H * depth)


def multi_head_attention(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo):
    depth = d_model // num_heads
    q_heads = split_heads(q @ Wq, num_heads, depth)
    k_heads = split_heads(k @ Wk, num_heads, depth)
    v_heads = split_heads(v @ Wv, num_heads, depth)
    out, weights = scaled_dot_product_attention(q_heads, k_heads, v_heads, mask)
    return combine_heads(out) @ Wo, weights

