"""One new position at a time, each attending to the keys up to itself: slow but plainly right."""
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
        K = k if k_cache is None else torch.cat((k_cache, k), 2)
        V = v if v_cache is None else torch.cat((v_cache, v), 2)
        T_past = K.shape[2] - T_new
        outs = []
        for i in range(T_new):
            seen = T_past + i + 1
            s = q[:, :, i:i + 1] @ K[:, :, :seen].transpose(2, 3) / self.d_k ** 0.5
            outs.append(torch.softmax(s, -1) @ V[:, :, :seen])
        out = torch.cat(outs, dim=2).permute(0, 2, 1, 3).reshape(B, T_new, D)
        return self.W_o(out), K, V
