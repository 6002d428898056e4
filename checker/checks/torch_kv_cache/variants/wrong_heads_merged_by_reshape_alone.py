# expect: the pair of axes a transpose or permute swaps
"""The heads are merged with out.reshape(B, T_new, D) and no transpose first: each output row holds pieces of
several positions' attention, so a later new token moves an earlier one's output although the mask is right. A
single decode step (T_new = 1) or one head hides it."""
import math

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, k_cache=None, v_cache=None):
        B, T_new, D = x.shape
        q, k, v = (w(x).view(B, T_new, self.h, self.d_k).transpose(1, 2) for w in (self.W_q, self.W_k, self.W_v))
        if k_cache is not None:
            k = torch.cat([k_cache, k], dim=2)
            v = torch.cat([v_cache, v], dim=2)
        T = k.size(2)
        future = torch.ones(T_new, T, dtype=torch.bool, device=x.device).triu(T - T_new + 1)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(self.d_k)).masked_fill(future, float("-inf"))
        out = scores.softmax(-1) @ v
        return self.W_o(out.reshape(B, T_new, D)), k, v
