"""Absorbed form with an HF-style float32 inv_freq buffer: float64 results differ by ~1e-9."""
# DeepSeek's inference trick: absorb W_uk into the query and W_uv into the output; attend over the latent
import math

import torch
from torch import nn


class MultiHeadLatentAttention(nn.Module):
    def __init__(self, d_model, num_heads, d_latent, d_nope, d_rope, d_v, base=10000.0):
        super().__init__()
        self.H, self.dn, self.dr, self.dv, self.dc = num_heads, d_nope, d_rope, d_v, d_latent
        self.W_q = nn.Linear(d_model, num_heads * (d_nope + d_rope), bias=False)
        self.W_dkv = nn.Linear(d_model, d_latent, bias=False)
        self.W_kr = nn.Linear(d_model, d_rope, bias=False)
        self.W_uk = nn.Linear(d_latent, num_heads * d_nope, bias=False)
        self.W_uv = nn.Linear(d_latent, num_heads * d_v, bias=False)
        self.W_o = nn.Linear(num_heads * d_v, d_model, bias=False)
        inv_freq = 1.0 / (base ** (torch.arange(0, d_rope, 2).float() / d_rope))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def _rope(self, x, start):
        T = x.size(-2)
        t = torch.arange(start, start + T, device=x.device, dtype=torch.float64)
        freqs = torch.outer(t, self.inv_freq.to(device=x.device, dtype=torch.float64))
        cos, sin = freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
        x1, x2 = x[..., : self.dr // 2], x[..., self.dr // 2:]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)

    def forward(self, x, c_cache=None, k_rope_cache=None):
        B, Tn, _ = x.shape
        Tp = 0 if c_cache is None else c_cache.shape[1]
        q = self.W_q(x).view(B, Tn, self.H, self.dn + self.dr)
        q_nope, q_pe = q[..., : self.dn], q[..., self.dn:]
        q_pe = self._rope(q_pe.transpose(1, 2), Tp)                      # (B, H, Tn, dr)
        c = self.W_dkv(x)
        kr = self._rope(self.W_kr(x), Tp)                                  # (B, Tn, dr)
        if c_cache is not None:
            c = torch.cat([c_cache, c], 1)
            kr = torch.cat([k_rope_cache, kr], 1)
        w_uk = self.W_uk.weight.view(self.H, self.dn, self.dc)
        w_uv = self.W_uv.weight.view(self.H, self.dv, self.dc)
        q_lat = torch.einsum("bthd,hdc->bhtc", q_nope, w_uk)               # (B, H, Tn, dc)
        scores = torch.einsum("bhtc,bsc->bhts", q_lat, c) + torch.einsum("bhtr,bsr->bhts", q_pe, kr)
        scores = scores / math.sqrt(self.dn + self.dr)
        T = Tp + Tn
        mask = torch.ones(Tn, T, dtype=torch.bool, device=x.device).tril(Tp)
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        p = torch.softmax(scores, dim=-1)
        o_lat = torch.einsum("bhts,bsc->bhtc", p, c)                        # (B, H, Tn, dc)
        o = torch.einsum("bhtc,hvc->bthv", o_lat, w_uv).reshape(B, Tn, self.H * self.dv)
        return self.W_o(o), c, kr
