# expect: the paper walkthrough's (x - mean) / (std + eps)
"""Seed 002's LayerNorm, verbatim: (x - mean) / (std + eps)."""

import math

import numpy as np

# ----------------------------------------------------------------------------- GIVEN building blocks
# Complete and correct: seed 002's classes, vectorised over the heads (and over an optional batch
# axis), with this catalogue's mask convention and weights applied as x @ W. No need to change them.


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax."""
    x_max = np.max(x, axis=axis, keepdims=True)
    exp_x = np.exp(x - x_max)
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V over any leading axes; returns (output, attention_weights).

    mask: bool, broadcastable to (..., T_q, T_k), True = may attend; a query with no visible key
    gets all-zero weights and a zero output.
    """
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])  # (..., T_q, d_k) x (..., d_k, T_k) -> (..., T_q, T_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)  # hidden keys: -inf, so exactly zero weight
    with np.errstate(invalid="ignore"):  # a row with no visible key gives NaN, zeroed below
        attention_weights = softmax(scores, axis=-1)  # (..., T_q, T_k)
    if mask is not None:
        attention_weights = np.where(mask, attention_weights, 0.0)
    return attention_weights @ V, attention_weights  # (..., T_q, T_k) x (..., T_k, d_v) -> (..., T_q, d_v)


class MultiHeadAttention:
    """Seed 002's MultiHeadAttention; forward(Q, K, V, mask) returns the output only."""

    def __init__(self, d_model, num_heads):
        assert d_model % num_heads == 0
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        # (d_model, d_model) each, applied as x @ W (seed 002 writes x @ W.T)
        self.W_q = np.random.randn(d_model, d_model) * 0.1
        self.W_k = np.random.randn(d_model, d_model) * 0.1
        self.W_v = np.random.randn(d_model, d_model) * 0.1
        self.W_o = np.random.randn(d_model, d_model) * 0.1

    def split_heads(self, x):
        """(..., T, d_model) -> (..., num_heads, T, d_k)"""
        x = x.reshape(*x.shape[:-1], self.num_heads, self.d_k)  # (..., T, H, d_k)
        return np.swapaxes(x, -2, -3)  # (..., H, T, d_k)

    def combine_heads(self, x):
        """(..., num_heads, T, d_k) -> (..., T, d_model)"""
        x = np.swapaxes(x, -2, -3)  # (..., T, H, d_k)
        return x.reshape(*x.shape[:-2], self.d_model)  # (..., T, d_model)

    def forward(self, Q, K, V, mask=None):
        """Q (..., T_q, d_model), K and V (..., T_k, d_model) -> (..., T_q, d_model)."""
        Q = self.split_heads(Q @ self.W_q)  # (..., H, T_q, d_k)
        K = self.split_heads(K @ self.W_k)  # (..., H, T_k, d_k)
        V = self.split_heads(V @ self.W_v)  # (..., H, T_k, d_k)
        heads, self.attention_weights = scaled_dot_product_attention(Q, K, V, mask)  # (..., H, T_q, d_k)
        return self.combine_heads(heads) @ self.W_o  # (..., T_q, d_model) x (d_model, d_model)


class FeedForward:
    """Seed 002's FeedForward: max(0, x W1 + b1) W2 + b2."""

    def __init__(self, d_model, d_ff):
        self.W1 = np.random.randn(d_model, d_ff) * 0.1
        self.b1 = np.zeros(d_ff)
        self.W2 = np.random.randn(d_ff, d_model) * 0.1
        self.b2 = np.zeros(d_model)

    def forward(self, x):
        hidden = np.maximum(0, x @ self.W1 + self.b1)  # (..., d_model) x (d_model, d_ff) -> (..., d_ff)
        return hidden @ self.W2 + self.b2  # (..., d_ff) x (d_ff, d_model) -> (..., d_model)


class LayerNorm:
    def __init__(self, d_model, eps=1e-6):
        self.gamma = np.ones(d_model)
        self.beta = np.zeros(d_model)
        self.eps = eps

    def forward(self, x):
        mean = x.mean(axis=-1, keepdims=True)
        std = x.std(axis=-1, keepdims=True)

        normalized = (x - mean) / (std + self.eps)
        output = self.gamma * normalized + self.beta

        return output


class TransformerBlock:
    def __init__(self, d_model, num_heads, d_ff):
        self.attention = MultiHeadAttention(d_model, num_heads)
        self.norm1 = LayerNorm(d_model)
        self.ff = FeedForward(d_model, d_ff)
        self.norm2 = LayerNorm(d_model)

    def forward(self, x, mask=None):
        attn_output = self.attention.forward(x, x, x, mask)
        x = self.norm1.forward(x + attn_output)
        ff_output = self.ff.forward(x)
        x = self.norm2.forward(x + ff_output)
        return x
