# expect: an argument or keyword left out
"""Forgets to hand the mask to the attention."""
import math

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along axis."""
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))  # x.shape
    return e / np.sum(e, axis=axis, keepdims=True)  # x.shape


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v over any leading axes; returns (output, weights)."""
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])  # (..., T_q, d_k) x (..., d_k, T_k) -> (..., T_q, T_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)  # hidden keys: -inf, so exactly zero weight
    with np.errstate(invalid="ignore"):  # a row with no visible key gives NaN, zeroed below
        weights = softmax(scores, axis=-1)  # (..., T_q, T_k)
    if mask is not None:
        weights = np.where(mask, weights, 0.0)
    return weights @ v, weights  # (..., T_q, T_k) x (..., T_k, d_v) -> (..., T_q, d_v)


def split_heads(x: np.ndarray, num_heads: int, depth: int) -> np.ndarray:
    """(B, T, d_model) -> (B, num_heads, T, depth)."""
    B, T, _ = x.shape
    x = x.reshape(B, T, num_heads, depth)  # (B, T, d_model) -> (B, T, H, depth): cut each position's features
    return x.transpose(0, 2, 1, 3)  # (B, T, H, depth) -> (B, H, T, depth)


def combine_heads(x: np.ndarray) -> np.ndarray:
    """(B, H, T, depth) -> (B, T, H * depth)."""
    B, H, T, depth = x.shape
    x = x.transpose(0, 2, 1, 3)  # (B, H, T, depth) -> (B, T, H, depth)
    return x.reshape(B, T, H * depth)  # (B, T, H, depth) -> (B, T, d_model)


def multi_head_attention(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo):
    """MultiHead(Q, K, V) = Concat(head_1..head_H) W_o, head_i = Attention(Q W_q^i, K W_k^i, V W_v^i)."""
    assert d_model % num_heads == 0
    depth = d_model // num_heads
    # 1) project, then cut d_model into num_heads heads of size depth
    q_heads = split_heads(q @ Wq, num_heads, depth)  # (B, T_q, d_model) x (d_model, d_model) -> (B, H, T_q, depth)
    k_heads = split_heads(k @ Wk, num_heads, depth)  # -> (B, H, T_k, depth)
    v_heads = split_heads(v @ Wv, num_heads, depth)  # -> (B, H, T_k, depth)
    # 2) attend in every head at once (the head axis is just one more leading axis)
    out, weights = scaled_dot_product_attention(q_heads, k_heads, v_heads)  # (B, H, T_q, depth), (B, H, T_q, T_k)
    # 3) concatenate the heads and mix them with W_o
    return combine_heads(out) @ Wo, weights  # (B, T_q, d_model) x (d_model, d_model) -> (B, T_q, d_model)
