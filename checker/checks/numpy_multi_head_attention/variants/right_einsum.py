"""einsum everywhere: the weights viewed as (d_model, H, depth), no explicit transposes."""
import numpy as np


def softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = np.einsum("...qd,...kd->...qk", q, k) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    weights = softmax(scores)
    if mask is not None:
        weights = np.where(mask, weights, 0.0)
    return np.einsum("...qk,...kd->...qd", weights, v), weights


def split_heads(x, num_heads, depth):
    B, T, _ = x.shape
    return np.einsum("bthd->bhtd", x.reshape(B, T, num_heads, depth))


def combine_heads(x):
    B, H, T, depth = x.shape
    return np.einsum("bhtd->bthd", x).reshape(B, T, H * depth)


def multi_head_attention(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo):
    depth = d_model // num_heads
    Q = np.einsum("btm,mhd->bhtd", q, Wq.reshape(d_model, num_heads, depth))
    K = np.einsum("btm,mhd->bhtd", k, Wk.reshape(d_model, num_heads, depth))
    V = np.einsum("btm,mhd->bhtd", v, Wv.reshape(d_model, num_heads, depth))
    out, weights = scaled_dot_product_attention(Q, K, V, mask)
    return np.einsum("bhtd,hdm->btm", out, Wo.reshape(num_heads, depth, d_model)), weights
