# expect: the pair of axes a transpose or permute swaps
"""Combines heads with a bare view: (B, H, T, d_k) -> (B, T, D) without moving H next to d_k."""
import math

import torch
from torch import nn


class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, Q, K, V, mask=None):
        d_k = Q.size(-1)
        scores = (Q @ K.transpose(-2, -1)) / math.sqrt(d_k)  # (B,H,T_q,T_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        attn = scores.softmax(dim=-1)
        if mask is not None:
            attn = attn.masked_fill(mask == 0, 0.0)
        return self.dropout(attn) @ V, attn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__()
        assert d_model % num_heads == 0
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.attn = ScaledDotProductAttention(dropout)

    def _split_heads(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B,H,T,d_k)

    def _combine_heads(self, x):
        B, H, T, d_k = x.shape
        return x.contiguous().view(B, T, H * d_k)  # (B,T,D)

    def forward(self, x_q, x_kv, mask=None):
        Q = self._split_heads(self.W_q(x_q))
        K = self._split_heads(self.W_k(x_kv))
        V = self._split_heads(self.W_v(x_kv))
        out, attn = self.attn(Q, K, V, mask)
        out = self.W_o(self._combine_heads(out))
        return out, attn
