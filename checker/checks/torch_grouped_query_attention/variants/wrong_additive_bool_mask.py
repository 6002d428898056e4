# expect: the bool mask added to them
"""Adds the bool mask to the scores, as if it were an additive float mask."""

import math

import torch
from torch import Tensor, nn


class GroupedQueryAttention(nn.Module):
    """Concat(head_1..head_H) W_o with head_h = softmax(Q_h K_{h//G}ᵀ / √d_k) V_{h//G}; returns (out, attn)."""

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int, dropout: float = 0.0):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"num_heads={num_heads} must divide d_model={d_model}")
        if num_heads % num_kv_heads:
            raise ValueError(f"num_kv_heads={num_kv_heads} must divide num_heads={num_heads}")
        self.num_heads, self.num_kv_heads, self.d_k = num_heads, num_kv_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.W_v = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        B, T, D = x.shape
        H, H_kv, d_k = self.num_heads, self.num_kv_heads, self.d_k
        # 1) project, split into H query heads and H_kv key/value heads
        Q = self.W_q(x).view(B, T, H, d_k).transpose(1, 2)  # (B, T, D) -> (B, T, H, d_k) -> (B, H, T, d_k)
        K = self.W_k(x).view(B, T, H_kv, d_k).transpose(1, 2)  # (B, T, H_kv*d_k) -> (B, H_kv, T, d_k)
        V = self.W_v(x).view(B, T, H_kv, d_k).transpose(1, 2)  # (B, T, H_kv*d_k) -> (B, H_kv, T, d_k)
        # 2) share: kv head g serves query heads g*G .. g*G+G-1 (repeat_interleave, not repeat)
        K = K.repeat_interleave(H // H_kv, dim=1)  # (B, H_kv, T, d_k) -> (B, H, T, d_k)
        V = V.repeat_interleave(H // H_kv, dim=1)  # (B, H_kv, T, d_k) -> (B, H, T, d_k)
        # 3) attend in every query head at once
        scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)  # (B, H, T, d_k) x (B, H, d_k, T) -> (B, H, T, T)
        if mask is not None:
            scores = scores + mask
        attn = scores.softmax(dim=-1)
        if mask is not None:
            pass
        out = self.dropout(attn) @ V  # (B, H, T, T) x (B, H, T, d_k) -> (B, H, T, d_k)
        # 4) concatenate the heads and project back to d_model
        out = self.W_o(out.transpose(1, 2).reshape(B, T, D))  # (B, H, T, d_k) -> (B, T, H, d_k) -> (B, T, D)
        return out, attn
