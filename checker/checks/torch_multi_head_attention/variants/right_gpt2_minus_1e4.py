# followup: every score near -57000
"""GPT-2's finite fill, masked_fill(mask == 0, -1e4): right while the real scores stay far above it."""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__()
        assert d_model % num_heads == 0
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def _split(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, T, D) -> (B, H, T, d_k)

    def forward(self, x_q, x_kv, mask=None):
        B, T_q, D = x_q.shape
        Q, K, V = self._split(self.W_q(x_q)), self._split(self.W_k(x_kv)), self._split(self.W_v(x_kv))
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, H, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e4)  # GPT-2's fill
        attn = scores.softmax(dim=-1)
        out = self.dropout(attn) @ V  # (B, H, T_q, d_k)
        out = out.transpose(1, 2).contiguous().view(B, T_q, D)
        return self.W_o(out), attn
