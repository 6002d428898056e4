# expect: where the contract says it raises ValueError
"""Copied from the multi-head attention kata: the size checks are asserts, which raise AssertionError
(and vanish under python -O)."""
import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads, dropout=0.0):
        super().__init__()
        assert d_model % num_heads == 0, "num_heads must divide d_model"
        assert num_heads % num_kv_heads == 0, "num_kv_heads must divide num_heads"
        self.h, self.h_kv, self.d_k = num_heads, num_kv_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.W_v = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.h, self.d_k).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.h_kv, self.d_k).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.h_kv, self.d_k).transpose(1, 2)
        k = k.repeat_interleave(self.h // self.h_kv, dim=1)
        v = v.repeat_interleave(self.h // self.h_kv, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        attn = scores.softmax(-1)
        if mask is not None:
            attn = attn.masked_fill(~mask, 0.0)
        return self.W_o((self.dropout(attn) @ v).transpose(1, 2).reshape(B, T, D)), attn
