"""LLaMA's repeat_kv (expand + reshape) and a loop over the kv groups, one group at a time."""
import math

import torch
from torch import nn


def repeat_kv(x, n_rep):
    B, H_kv, T, d = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(B, H_kv, n_rep, T, d).reshape(B, H_kv * n_rep, T, d)


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads, dropout=0.0):
        super().__init__()
        if d_model % num_heads or num_heads % num_kv_heads:
            raise ValueError("num_heads must divide d_model and num_kv_heads must divide num_heads")
        self.n_heads, self.n_kv_heads = num_heads, num_kv_heads
        self.head_dim = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, num_kv_heads * self.head_dim)
        self.W_v = nn.Linear(d_model, num_kv_heads * self.head_dim)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        xq = self.W_q(x).reshape(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        xk = self.W_k(x).reshape(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        xv = self.W_v(x).reshape(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        keys, values = repeat_kv(xk, self.n_heads // self.n_kv_heads), repeat_kv(xv, self.n_heads // self.n_kv_heads)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        probs = torch.softmax(scores, dim=-1).nan_to_num(0.0)
        outs = [self.dropout(probs[:, h: h + 1]) @ values[:, h: h + 1] for h in range(self.n_heads)]
        out = torch.cat(outs, dim=1).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), probs
