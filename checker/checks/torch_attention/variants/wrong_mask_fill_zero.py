# expect: exp(0) = 1 still gives them weight
"""Hidden keys get a score of 0 instead of -inf: they still get weight after softmax."""

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
        scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)  # (B, H, T_q, d_k) x (B, H, d_k, T_k) -> (B, H, T_q, T_k)
        # 2) hidden keys get -inf, so softmax gives them exactly zero weight
        if mask is not None:
            scores = scores.masked_fill(~mask, 0.0)
        # 3) normalise over the keys (the last axis); a row of only -inf gives NaN: make it zero
        weights = scores.softmax(dim=-1)  # (B, H, T_q, T_k)
        if mask is not None:
            pass
        weights = self.dropout(weights)
        # 4) weighted sum of the values
        out = weights @ V  # (B, H, T_q, T_k) x (B, H, T_k, d_v) -> (B, H, T_q, d_v)
        return out, weights
