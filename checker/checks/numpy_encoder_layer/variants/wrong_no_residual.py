# expect: receives multi_head_attention's output; expected the layer's input x + multi_head_attention's output
"""Normalises the sublayer outputs alone: no residual connection."""

import math

import numpy as np

# ----------------------------------------------------------------------------- GIVEN building blocks
# Complete and correct (the references of the earlier NumPy katas): use them, no need to change them.


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along axis."""
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))  # x.shape
    return e / np.sum(e, axis=axis, keepdims=True)  # x.shape


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v over any leading axes; returns (output, weights).

    mask: bool, broadcastable to (..., T_q, T_k), True = may attend; a query with no visible key
    gets all-zero weights and a zero output.
    """
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
    x = x.reshape(B, T, num_heads, depth)  # (B, T, d_model) -> (B, T, H, depth)
    return x.transpose(0, 2, 1, 3)  # (B, T, H, depth) -> (B, H, T, depth)


def combine_heads(x: np.ndarray) -> np.ndarray:
    """(B, H, T, depth) -> (B, T, H * depth)."""
    B, H, T, depth = x.shape
    x = x.transpose(0, 2, 1, 3)  # (B, H, T, depth) -> (B, T, H, depth)
    return x.reshape(B, T, H * depth)  # (B, T, H, depth) -> (B, T, d_model)


def multi_head_attention(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo):
    """Seed 000's multi-head attention: q (B, T_q, D), k and v (B, T_k, D) -> (output (B, T_q, D), weights (B, H, T_q, T_k))."""
    depth = d_model // num_heads
    q_heads = split_heads(q @ Wq, num_heads, depth)  # (B, T_q, D) x (D, D) -> (B, H, T_q, depth)
    k_heads = split_heads(k @ Wk, num_heads, depth)  # -> (B, H, T_k, depth)
    v_heads = split_heads(v @ Wv, num_heads, depth)  # -> (B, H, T_k, depth)
    out, weights = scaled_dot_product_attention(q_heads, k_heads, v_heads, mask)  # (B, H, T_q, depth), (B, H, T_q, T_k)
    return combine_heads(out) @ Wo, weights  # (B, T_q, D) x (D, D) -> (B, T_q, D)


def feed_forward_network(x, W1, b1, W2, b2):
    """Seed 000's FFN: max(0, x W1 + b1) W2 + b2, (..., D) -> (..., D)."""
    hidden = np.maximum(x @ W1 + b1, 0)  # (..., D) x (D, d_ff) -> (..., d_ff)
    return hidden @ W2 + b2  # (..., d_ff) x (d_ff, D) -> (..., D)


def layer_norm(x, gamma, beta, epsilon=1e-6):
    """gamma * (x - mean) / sqrt(var + epsilon) + beta over the last axis (biased variance)."""
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # (..., 1)
    return gamma * (x - mean) / np.sqrt(var + epsilon) + beta  # (..., D)


def add_and_norm(x, sublayer_output, gamma, beta):
    """Post-norm Add & Norm: layer_norm(x + sublayer_output)."""
    return layer_norm(x + sublayer_output, gamma, beta)  # (..., D)


def encoder_layer(x, mask, d_model, num_heads, d_ff,
                  Wq_mha, Wk_mha, Wv_mha, Wo_mha, gamma1_ln, beta1_ln,
                  W1_ffn, b1_ffn, W2_ffn, b2_ffn, gamma2_ln, beta2_ln):
    attn_output, _ = multi_head_attention(x, x, x, mask, d_model, num_heads, Wq_mha, Wk_mha, Wv_mha, Wo_mha)
    out1 = layer_norm(attn_output, gamma1_ln, beta1_ln)
    ffn_output = feed_forward_network(out1, W1_ffn, b1_ffn, W2_ffn, b2_ffn)
    return layer_norm(ffn_output, gamma2_ln, beta2_ln)
