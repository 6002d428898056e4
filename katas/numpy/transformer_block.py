"""The paper walkthrough's TransformerBlock in NumPy: LayerNorm and the block around the given attention and FFN.

Shape legend:
    B      batch size (optional: the paper walkthrough works on a single sequence, x of shape (T, D))
    T      sequence length
    D      d_model
    H      num_heads
    d_k    D // H, the size of one head
    d_ff   the inner size of the feed-forward network

Implement, keeping the paper walkthrough's structure and names:

  LayerNorm(d_model, eps=1e-6).forward(x) = gamma * (x - mean) / sqrt(var + eps) + beta
      over the last axis, biased variance (divide by D). NOT the paper walkthrough's (x - mean) / (std + eps):
      this catalogue puts eps inside the square root, as the NumPy tutorial and nn.LayerNorm do.

  TransformerBlock(d_model, num_heads, d_ff), whose __init__ builds exactly these attributes:
      self.attention = MultiHeadAttention(d_model, num_heads)
      self.norm1     = LayerNorm(d_model)
      self.ff        = FeedForward(d_model, d_ff)
      self.norm2     = LayerNorm(d_model)
  and whose forward(x, mask=None) is post-norm, as in the paper walkthrough and the paper:
      x = norm1(x + attention(x, x, x, mask))
      x = norm2(x + ff(x))

The checker builds TransformerBlock(d_model, num_heads, d_ff), then OVERWRITES these weights by
name before calling forward:
      block.attention.W_q, .W_k, .W_v, .W_o     (D, D)
      block.norm1.gamma, block.norm1.beta       (D,)
      block.ff.W1 (D, d_ff), .b1 (d_ff,), .W2 (d_ff, D), .b2 (D,)
      block.norm2.gamma, block.norm2.beta       (D,)
so they must exist under these names, with these shapes, right after construction, and
forward must use them (not copies taken in __init__). eps stays at its default, 1e-6.

forward(x, mask=None):
    x     (T, D) or (B, T, D) float array
    mask  None, or a bool array broadcastable to the attention scores, (H, T, T) for a (T, D)
          input and (B, H, T, T) for (B, T, D): e.g. (T, T) causal, (B, 1, 1, T) padding.
          True = may attend. The paper walkthrough uses the opposite (1 = masked, added as mask * -1e9).
    returns the shape and the dtype of x (float32 in gives float32 out).

Rules: NumPy only; the file must not import torch. Do not modify x or mask.
"""

import math

import numpy as np

# ----------------------------------------------------------------------------- GIVEN building blocks
# Complete and correct: the paper walkthrough's classes, vectorised over the heads (and over an optional batch
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
    """The paper walkthrough's MultiHeadAttention; forward(Q, K, V, mask) returns the output only."""

    def __init__(self, d_model, num_heads):
        assert d_model % num_heads == 0
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        # (d_model, d_model) each, applied as x @ W (the paper walkthrough writes x @ W.T)
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
    """The paper walkthrough's FeedForward: max(0, x W1 + b1) W2 + b2."""

    def __init__(self, d_model, d_ff):
        self.W1 = np.random.randn(d_model, d_ff) * 0.1
        self.b1 = np.zeros(d_ff)
        self.W2 = np.random.randn(d_ff, d_model) * 0.1
        self.b2 = np.zeros(d_model)

    def forward(self, x):
        hidden = np.maximum(0, x @ self.W1 + self.b1)  # (..., d_model) x (d_model, d_ff) -> (..., d_ff)
        return hidden @ self.W2 + self.b2  # (..., d_ff) x (d_ff, d_model) -> (..., d_model)


# ----------------------------------------------------------------------------- your part


class LayerNorm:
    def __init__(self, d_model, eps=1e-6):
        self.gamma = np.ones(d_model)
        self.beta = np.zeros(d_model)
        self.eps = eps

    def forward(self, x):
        raise NotImplementedError("write the body of LayerNorm.forward")


class TransformerBlock:
    def __init__(self, d_model, num_heads, d_ff):
        raise NotImplementedError("write TransformerBlock.__init__: attention, norm1, ff, norm2")

    def forward(self, x, mask=None):
        raise NotImplementedError("write the body of TransformerBlock.forward")
