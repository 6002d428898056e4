"""The cache needs no mask at all: scores against the cached keys unmasked, scores against the new keys
with tril(T_new, T_new), joined before one softmax. -1e9 instead of -inf."""
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
        if k_cache is None:
            k_cache = k.new_zeros(B, self.h, 0, self.d_k)
            v_cache = v.new_zeros(B, self.h, 0, self.d_k)
        old = torch.einsum("bhqd,bhkd->bhqk", q, k_cache) / math.sqrt(self.d_k)
        new = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.d_k)
        causal = torch.tril(torch.ones(T_new, T_new, device=x.device, dtype=torch.bool))
        new = torch.where(causal, new, torch.full_like(new, -1e9))
        weights = torch.cat([old, new], dim=-1).softmax(dim=-1)
        K, V = torch.cat([k_cache, k], dim=2), torch.cat([v_cache, v], dim=2)
        out = torch.einsum("bhqk,bhkd->bqhd", weights, V).reshape(B, T_new, D)
        return self.W_o(out), K, V
