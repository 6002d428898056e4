# expect: an argument or keyword left out
"""THE classic KV-cache slip: the causal mask is built as if the new tokens started at position 0."""
import math

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split(self, t):
        B, T, _ = t.shape
        return t.view(B, T, self.h, self.d_k).transpose(1, 2)

    def forward(self, x, k_cache=None, v_cache=None):
        B, T_new, D = x.shape
        q, k, v = self.split(self.W_q(x)), self.split(self.W_k(x)), self.split(self.W_v(x))
        if k_cache is not None:
            k = torch.cat([k_cache, k], dim=2)
            v = torch.cat([v_cache, v], dim=2)
        T = k.size(2)
        mask = torch.tril(torch.ones(T_new, T, device=x.device))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        scores = scores.masked_fill(mask == 0, float("-inf"))
        out = scores.softmax(-1) @ v
        return self.W_o(out.transpose(1, 2).contiguous().view(B, T_new, D)), k, v
