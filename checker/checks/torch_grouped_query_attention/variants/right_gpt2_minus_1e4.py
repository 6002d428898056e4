# followup: every score near -57000
"""GQA with GPT-2's finite fill, masked_fill(~mask, -1e4): right while the real scores stay far above it."""
import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads, dropout=0.0):
        super().__init__()
        if d_model % num_heads != 0 or num_heads % num_kv_heads != 0:
            raise ValueError("num_heads must divide d_model, and num_kv_heads must divide num_heads")
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.W_v = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        G = self.num_heads // self.num_kv_heads
        q = self.W_q(x).view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, H, T, d_k)
        k = self.W_k(x).view(B, T, self.num_kv_heads, self.d_k).transpose(1, 2)  # (B, H_kv, T, d_k)
        v = self.W_v(x).view(B, T, self.num_kv_heads, self.d_k).transpose(1, 2)
        k, v = k.repeat_interleave(G, dim=1), v.repeat_interleave(G, dim=1)  # (B, H, T, d_k)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, H, T, T)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e4)  # GPT-2's fill
        attn = scores.softmax(dim=-1)
        out = (self.dropout(attn) @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), attn
