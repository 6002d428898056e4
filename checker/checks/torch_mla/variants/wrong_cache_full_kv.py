# expect: one entry per head
"""Caches the per-head keys and values, as a plain KV cache does, instead of the latent and the RoPE key."""
import math

import torch
from torch import nn


def rope(x, positions, base):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=x.dtype, device=x.device) / d)
    angle = positions.to(x.dtype)[:, None] * theta
    cos, sin = angle.cos(), angle.sin()
    a, b = x.chunk(2, dim=-1)
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


class MultiHeadLatentAttention(nn.Module):
    def __init__(self, d_model, num_heads, d_latent, d_nope, d_rope, d_v, base=10000.0):
        super().__init__()
        self.H, self.d_nope, self.d_rope, self.d_v, self.base = num_heads, d_nope, d_rope, d_v, base
        self.W_q = nn.Linear(d_model, num_heads * (d_nope + d_rope), bias=False)
        self.W_dkv = nn.Linear(d_model, d_latent, bias=False)
        self.W_kr = nn.Linear(d_model, d_rope, bias=False)
        self.W_uk = nn.Linear(d_latent, num_heads * d_nope, bias=False)
        self.W_uv = nn.Linear(d_latent, num_heads * d_v, bias=False)
        self.W_o = nn.Linear(num_heads * d_v, d_model, bias=False)

    def forward(self, x, k_cache=None, v_cache=None):
        B, T_new, _ = x.shape
        T_past = 0 if k_cache is None else k_cache.size(2)
        pos = torch.arange(T_past, T_past + T_new, device=x.device)
        q = self.W_q(x).view(B, T_new, self.H, -1).transpose(1, 2)
        q = torch.cat([q[..., :self.d_nope], rope(q[..., self.d_nope:], pos, self.base)], dim=-1)
        c = self.W_dkv(x)
        k_nope = self.W_uk(c).view(B, T_new, self.H, self.d_nope).transpose(1, 2)
        k_pe = rope(self.W_kr(x), pos, self.base)[:, None].expand(B, self.H, T_new, self.d_rope)
        k = torch.cat([k_nope, k_pe], dim=-1)
        v = self.W_uv(c).view(B, T_new, self.H, self.d_v).transpose(1, 2)
        if k_cache is not None:
            k, v = torch.cat([k_cache, k], dim=2), torch.cat([v_cache, v], dim=2)
        T = k.size(2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        mask = torch.ones(T_new, T, dtype=torch.bool, device=x.device).tril(T_past)
        att = scores.masked_fill(~mask, float("-inf")).softmax(-1)
        out = (att @ v).transpose(1, 2).reshape(B, T_new, -1)
        return self.W_o(out), k, v
