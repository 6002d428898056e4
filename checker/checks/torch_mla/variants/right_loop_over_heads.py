"""Head by head with plain matmuls, rotate_half RoPE from cos/sin tables, and -1e9 for the future keys."""
import math

import torch
from torch import nn


class MultiHeadLatentAttention(nn.Module):
    def __init__(self, d_model, num_heads, d_latent, d_nope, d_rope, d_v, base=10000.0):
        super().__init__()
        self.num_heads, self.d_nope, self.d_rope, self.d_v, self.base = num_heads, d_nope, d_rope, d_v, base
        self.W_q = nn.Linear(d_model, num_heads * (d_nope + d_rope), bias=False)
        self.W_dkv = nn.Linear(d_model, d_latent, bias=False)
        self.W_kr = nn.Linear(d_model, d_rope, bias=False)
        self.W_uk = nn.Linear(d_latent, num_heads * d_nope, bias=False)
        self.W_uv = nn.Linear(d_latent, num_heads * d_v, bias=False)
        self.W_o = nn.Linear(num_heads * d_v, d_model, bias=False)

    def _rotate(self, x, start):
        half = self.d_rope // 2
        freq = 1.0 / self.base ** (torch.arange(half, dtype=x.dtype, device=x.device) * 2 / self.d_rope)
        pos = torch.arange(start, start + x.shape[-2], dtype=x.dtype, device=x.device)
        angle = pos[:, None] * freq[None, :]
        cos, sin = torch.cos(angle), torch.sin(angle)
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    def forward(self, x, c_cache=None, k_rope_cache=None):
        t_past = 0 if c_cache is None else c_cache.shape[1]
        t_new = x.shape[1]
        c_kv = self.W_dkv(x)
        k_rope = self._rotate(self.W_kr(x), t_past)
        if c_cache is not None:
            c_kv = torch.cat((c_cache, c_kv), dim=1)
            k_rope = torch.cat((k_rope_cache, k_rope), dim=1)
        t_all = c_kv.shape[1]
        allowed = torch.arange(t_all, device=x.device)[None, :] <= torch.arange(t_past, t_all, device=x.device)[:, None]
        q_all = self.W_q(x)
        dq = self.d_nope + self.d_rope
        outs = []
        for h in range(self.num_heads):
            q = q_all[..., h * dq:(h + 1) * dq]
            q = torch.cat([q[..., :self.d_nope], self._rotate(q[..., self.d_nope:], t_past)], dim=-1)
            k_nope = c_kv @ self.W_uk.weight[h * self.d_nope:(h + 1) * self.d_nope].T
            v = c_kv @ self.W_uv.weight[h * self.d_v:(h + 1) * self.d_v].T
            k = torch.cat([k_nope, k_rope], dim=-1)
            s = q @ k.transpose(1, 2) / math.sqrt(dq)
            s = torch.where(allowed, s, torch.full_like(s, -1e9))
            outs.append(torch.softmax(s, dim=-1) @ v)
        return self.W_o(torch.cat(outs, dim=-1)), c_kv, k_rope
