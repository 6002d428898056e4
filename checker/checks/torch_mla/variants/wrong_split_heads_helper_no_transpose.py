# expect: your queries, keys and values are cut into heads with a bare view
"""One helper cuts q, k and v into heads with a bare view(B, H, T, d), no transpose."""
import math

import torch
from torch import Tensor, nn


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class MultiHeadLatentAttention(nn.Module):
    def __init__(self, d_model, num_heads, d_latent, d_nope, d_rope, d_v, base=10000.0):
        super().__init__()
        self.h, self.d_nope, self.d_rope, self.d_v, self.base = num_heads, d_nope, d_rope, d_v, base
        self.W_q = nn.Linear(d_model, num_heads * (d_nope + d_rope), bias=False)
        self.W_dkv = nn.Linear(d_model, d_latent, bias=False)
        self.W_kr = nn.Linear(d_model, d_rope, bias=False)
        self.W_uk = nn.Linear(d_latent, num_heads * d_nope, bias=False)
        self.W_uv = nn.Linear(d_latent, num_heads * d_v, bias=False)
        self.W_o = nn.Linear(num_heads * d_v, d_model, bias=False)

    def rope(self, x, pos):
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.d_rope, 2, device=x.device, dtype=x.dtype) / self.d_rope))
        freqs = pos.to(x.dtype)[:, None] * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return x * emb.cos() + rotate_half(x) * emb.sin()

    def split_heads(self, t, d):
        B, T, _ = t.shape
        return t.view(B, self.h, T, d)  # (B, T, H*d) -> (B, H, T, d)

    def forward(self, x, c_cache=None, k_rope_cache=None):
        B, T_new, _ = x.shape
        T_past = 0 if c_cache is None else c_cache.size(1)
        T = T_past + T_new
        pos = torch.arange(T_past, T, device=x.device)
        q = self.split_heads(self.W_q(x), self.d_nope + self.d_rope)
        q_nope, q_rope = q.split([self.d_nope, self.d_rope], dim=-1)
        q_rope = self.rope(q_rope, pos)
        c_new = self.W_dkv(x)
        k_rope_new = self.rope(self.W_kr(x), pos)
        c_kv = c_new if c_cache is None else torch.cat([c_cache, c_new], dim=1)
        k_rope = k_rope_new if k_rope_cache is None else torch.cat([k_rope_cache, k_rope_new], dim=1)
        k_nope = self.split_heads(self.W_uk(c_kv), self.d_nope)
        v = self.split_heads(self.W_uv(c_kv), self.d_v)
        k = torch.cat([k_nope, k_rope[:, None].expand(B, self.h, T, self.d_rope)], dim=-1)
        qq = torch.cat([q_nope, q_rope], dim=-1)
        scores = qq @ k.transpose(-2, -1) / math.sqrt(self.d_nope + self.d_rope)
        mask = torch.ones(T_new, T, dtype=torch.bool, device=x.device).tril(T_past)
        scores = scores.masked_fill(~mask, float("-inf"))
        attn = scores.softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(B, T_new, self.h * self.d_v)
        return self.W_o(out), c_kv, k_rope
