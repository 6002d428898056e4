# expect: parameter W_k.weight should have shape
"""Kept the MHA projections (W_k, W_v: d_model -> d_model) and slices the first num_kv_heads heads:
the kv projections must be num_kv_heads * d_k wide, that is where GQA saves its cache memory."""
import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads, dropout=0.0):
        super().__init__()
        if d_model % num_heads or num_heads % num_kv_heads:
            raise ValueError("sizes must divide")
        self.h, self.h_kv, self.d_k = num_heads, num_kv_heads, d_model // num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.h, self.d_k).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.h, self.d_k).transpose(1, 2)[:, : self.h_kv]
        v = self.W_v(x).view(B, T, self.h, self.d_k).transpose(1, 2)[:, : self.h_kv]
        k = k.repeat_interleave(self.h // self.h_kv, dim=1)
        v = v.repeat_interleave(self.h // self.h_kv, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        attn = scores.softmax(-1)
        if mask is not None:
            attn = attn.masked_fill(~mask, 0.0)
        return self.W_o((self.dropout(attn) @ v).transpose(1, 2).reshape(B, T, D)), attn
