# expect: keeps something from the first call
"""The (B, T, H, d_k) shape of the split is worked out on the first call and kept on self, to save the arithmetic:
right for the first input, and a reshape of another length's queries into the first length's shape after that."""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__()
        assert d_model % num_heads == 0
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self._q_shape = None

    def forward(self, x_q, x_kv, mask=None):
        if self._q_shape is None:
            self._q_shape = (x_q.size(0), x_q.size(1), self.h, self.d_k)
        B = x_q.size(0)
        q = self.W_q(x_q).reshape(self._q_shape).transpose(1, 2)
        k = self.W_k(x_kv).view(B, -1, self.h, self.d_k).transpose(1, 2)
        v = self.W_v(x_kv).view(B, -1, self.h, self.d_k).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        out = (self.dropout(attn) @ v).transpose(1, 2).reshape(B, -1, self.h * self.d_k)
        return self.W_o(out), attn
