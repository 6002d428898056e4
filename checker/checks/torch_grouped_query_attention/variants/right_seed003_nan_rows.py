# followup: came out NaN
"""Seed 003's masking verbatim (-inf and nothing more): a query with no visible key is NaN."""
import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads, dropout=0.0):
        super().__init__()
        if d_model % num_heads or num_heads % num_kv_heads:
            raise ValueError("sizes must divide")
        self.h, self.h_kv, self.d_k = num_heads, num_kv_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.W_v = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.h, self.d_k).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.h_kv, self.d_k).transpose(1, 2).repeat_interleave(self.h // self.h_kv, 1)
        v = self.W_v(x).view(B, T, self.h_kv, self.d_k).transpose(1, 2).repeat_interleave(self.h // self.h_kv, 1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        attn = self.dropout(scores.softmax(-1))
        return self.W_o((attn @ v).transpose(1, 2).reshape(B, T, D)), attn
