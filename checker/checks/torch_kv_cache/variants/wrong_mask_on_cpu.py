# expect: pass device=x.device
"""Right in every value, but the causal mask is always created on the CPU."""
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
        T_past = 0 if k_cache is None else k_cache.size(2)
        if k_cache is not None:
            k = torch.cat([k_cache, k], dim=2)
            v = torch.cat([v_cache, v], dim=2)
        mask = torch.ones(T_new, T_past + T_new, dtype=torch.bool).tril(T_past)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(self.d_k)).masked_fill(~mask, float("-inf"))
        out = scores.softmax(-1) @ v
        return self.W_o(out.transpose(1, 2).reshape(B, T_new, D)), k, v
