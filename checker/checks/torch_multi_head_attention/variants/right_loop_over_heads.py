"""One head at a time with slices of the weight matrices, then torch.cat: slow but correct."""
import math

import torch
from torch import nn


def attention(q, k, v, mask, dropout):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    w = torch.softmax(scores, dim=-1)
    if mask is not None:
        w = torch.where(mask, w, torch.zeros_like(w))
    return dropout(w) @ v, w


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x_q, x_kv, mask=None):
        heads, weights = [], []
        for h in range(self.num_heads):
            rows = slice(h * self.d_k, (h + 1) * self.d_k)
            q = x_q @ self.W_q.weight[rows].T + self.W_q.bias[rows]     # (B, T_q, d_k)
            k = x_kv @ self.W_k.weight[rows].T + self.W_k.bias[rows]    # (B, T_k, d_k)
            v = x_kv @ self.W_v.weight[rows].T + self.W_v.bias[rows]
            m = None if mask is None else mask[:, 0] if mask.shape[1] == 1 else mask[:, h]
            out, w = attention(q, k, v, m, self.dropout)
            heads.append(out)
            weights.append(w)
        return self.W_o(torch.cat(heads, dim=-1)), torch.stack(weights, dim=1)
