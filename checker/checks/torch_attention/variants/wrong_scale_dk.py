# expect: a square root, power or exponent changed
"""Scaled dot-product attention (reference answer).

Shape legend:
    B    batch size
    H    number of heads
    T_q  query length
    T_k  key (and value) length
    d_k  query/key size per head
    d_v  value size per head

Mask convention (the whole catalogue): a boolean tensor broadcastable to (B, H, T_q, T_k);
True means "this query may attend to this key". A query with no visible key gets all-zero
weights and an all-zero output (as torch.nn.functional.scaled_dot_product_attention does).
"""

import math

import torch
from torch import Tensor, nn


class ScaledDotProductAttention(nn.Module):
    """softmax(Q K^T / sqrt(d_k)) V, with an optional mask; returns (output, weights)."""

    def __init__(self, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        d_k = Q.size(-1)
        # 1) similarity of every query with every key, scaled so softmax does not saturate
        scores = Q @ K.transpose(-2, -1) / d_k  # (B, H, T_q, d_k) x (B, H, d_k, T_k) -> (B, H, T_q, T_k)
        # 2) hidden keys get -inf, so softmax gives them exactly zero weight
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        # 3) normalise over the keys (the last axis); a row of only -inf gives NaN: make it zero
        weights = scores.softmax(dim=-1)  # (B, H, T_q, T_k)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)
        weights = self.dropout(weights)
        # 4) weighted sum of the values
        out = weights @ V  # (B, H, T_q, T_k) x (B, H, T_k, d_v) -> (B, H, T_q, d_v)
        return out, weights
