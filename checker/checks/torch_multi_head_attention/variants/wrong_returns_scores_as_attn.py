# expect: you return the scores before the softmax as attn
"""Returns the masked scores as attn instead of the softmax weights (the variable that is in scope at the end)."""
import math

import torch
from torch import nn


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
        B, T_q, D = x_q.shape
        T_k = x_kv.size(1)
        Q = self.W_q(x_q).view(B, T_q, self.num_heads, self.d_k).transpose(1, 2)
        K = self.W_k(x_kv).view(B, T_k, self.num_heads, self.d_k).transpose(1, 2)
        V = self.W_v(x_kv).view(B, T_k, self.num_heads, self.d_k).transpose(1, 2)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        if mask is not None:
            attn = attn.masked_fill(~mask, 0.0)
        out = (self.dropout(attn) @ V).transpose(1, 2).reshape(B, T_q, D)
        return self.W_o(out), scores
