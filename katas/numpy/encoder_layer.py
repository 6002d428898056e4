"""Transformer encoder layer with explicit weights (NumPy, the NumPy tutorial).

Shape legend:
    B      batch size
    T      sequence length
    D      d_model
    H      num_heads
    depth  D // H, the size of one head (the paper's d_k)
    d_ff   the inner size of the feed-forward network

Implement encoder_layer with the NumPy tutorial's signature. It is the paper's encoder layer (post-norm):

    attn = MultiHeadAttention(x, x, x, mask)          self-attention: Q, K and V all come from x
    out1 = LayerNorm(x + attn)                        Add & Norm with gamma1_ln, beta1_ln
    ffn  = FFN(out1)                                  the FFN reads out1, not x
    out2 = LayerNorm(out1 + ffn)                      Add & Norm with gamma2_ln, beta2_ln

Arguments:
    x          (B, T, D) float array
    mask       None, or a bool array broadcastable to (B, H, T, T): usually the padding mask
               (B, 1, 1, T), True = a real token that may be attended to, False = PAD (hidden).
               The NumPy tutorial passes the opposite, a 0/1 float mask where 1 = PAD: not here.
    d_model, num_heads, d_ff   ints, D = d_model, depth = d_model // num_heads
    Wq_mha, Wk_mha, Wv_mha, Wo_mha   (D, D) each, applied as x @ W (no bias)
    gamma1_ln, beta1_ln        (D,) the first Add & Norm's scale and shift
    W1_ffn (D, d_ff), b1_ffn (d_ff,), W2_ffn (d_ff, D), b2_ffn (D,)   the FFN, x @ W1 + b1
    gamma2_ln, beta2_ln        (D,) the second Add & Norm's scale and shift
Returns:
    (B, T, D), the dtype of x (float32 in gives float32 out).

The building blocks below the imports are GIVEN, complete (the NumPy tutorial's functions with this
catalogue's mask convention): call them. A query with no visible key gets zero attention.

Rules: NumPy only; the file must not import torch. Do not modify the arguments.
"""

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
    """The NumPy tutorial's multi-head attention: q (B, T_q, D), k and v (B, T_k, D) -> (output (B, T_q, D), weights (B, H, T_q, T_k))."""
    depth = d_model // num_heads
    q_heads = split_heads(q @ Wq, num_heads, depth)  # (B, T_q, D) x (D, D) -> (B, H, T_q, depth)
    k_heads = split_heads(k @ Wk, num_heads, depth)  # -> (B, H, T_k, depth)
    v_heads = split_heads(v @ Wv, num_heads, depth)  # -> (B, H, T_k, depth)
    out, weights = scaled_dot_product_attention(q_heads, k_heads, v_heads, mask)  # (B, H, T_q, depth), (B, H, T_q, T_k)
    return combine_heads(out) @ Wo, weights  # (B, T_q, D) x (D, D) -> (B, T_q, D)


def feed_forward_network(x, W1, b1, W2, b2):
    """The NumPy tutorial's FFN: max(0, x W1 + b1) W2 + b2, (..., D) -> (..., D)."""
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


# ----------------------------------------------------------------------------- your part


def encoder_layer(x, mask, d_model, num_heads, d_ff,
                  Wq_mha, Wk_mha, Wv_mha, Wo_mha, gamma1_ln, beta1_ln,
                  W1_ffn, b1_ffn, W2_ffn, b2_ffn, gamma2_ln, beta2_ln):
    raise NotImplementedError("write the body of encoder_layer")
