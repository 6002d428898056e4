# expect: one variable read where another belongs
"""Projects the values with W_k (copy-paste)."""
import math

import torch
from torch import Tensor, nn


class MultiHeadAttention(nn.Module):
    """Concat(head_1..head_H) W_o with head_h = softmax(Q_h K_hᵀ / √d_k) V_h; returns (out, attn)."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0):
        super().__init__()
        assert d_model % num_heads == 0, "num_heads must divide d_model"
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def _split_heads(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, T, D) -> (B, T, H, d_k) -> (B, H, T, d_k)

    def _combine_heads(self, x: Tensor) -> Tensor:
        B, H, T, d_k = x.shape
        return x.transpose(1, 2).reshape(B, T, H * d_k)  # (B, H, T, d_k) -> (B, T, H, d_k) -> (B, T, D)

    def _attention(self, Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None) -> tuple[Tensor, Tensor]:
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, H, T_q, d_k) x (B, H, d_k, T_k) -> (B, H, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))  # hidden keys: -inf, so weight 0
        weights = scores.softmax(dim=-1)  # over the keys
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)  # a row with no visible key: NaN -> 0
        return self.dropout(weights) @ V, weights  # (B, H, T_q, T_k) x (B, H, T_k, d_k) -> (B, H, T_q, d_k)

    def forward(self, x_q: Tensor, x_kv: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        # 1) project: queries from x_q, keys and values from x_kv; then split into heads
        Q = self._split_heads(self.W_q(x_q))  # (B, T_q, D) -> (B, H, T_q, d_k)
        K = self._split_heads(self.W_k(x_kv))  # (B, T_k, D) -> (B, H, T_k, d_k)
        V = self._split_heads(self.W_k(x_kv))  # (B, T_k, D) -> (B, H, T_k, d_k)
        # 2) attend in every head at once
        out, attn = self._attention(Q, K, V, mask)  # (B, H, T_q, d_k), (B, H, T_q, T_k)
        # 3) concatenate the heads and project back to d_model
        out = self.W_o(self._combine_heads(out))  # (B, H, T_q, d_k) -> (B, T_q, D)
        return out, attn
