"""The inference form of the paper (section 2.1.2): W_uk absorbed into the query and W_uv into the output,
so attention runs against the cached latent itself and no per-head key or value is ever built."""
import math

import torch
from torch import nn


def rope(x, positions, base):
    d = x.size(-1)
    inv = base ** (-torch.arange(0, d, 2, dtype=x.dtype, device=x.device) / d)
    ang = torch.outer(positions.to(x.dtype), inv)
    ang = torch.cat([ang, ang], dim=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * ang.cos() + torch.cat([-x2, x1], dim=-1) * ang.sin()


class MultiHeadLatentAttention(nn.Module):
    def __init__(self, d_model, num_heads, d_latent, d_nope, d_rope, d_v, base=10000.0):
        super().__init__()
        self.h, self.dn, self.dr, self.dv, self.dc, self.base = num_heads, d_nope, d_rope, d_v, d_latent, base
        self.W_q = nn.Linear(d_model, num_heads * (d_nope + d_rope), bias=False)
        self.W_dkv = nn.Linear(d_model, d_latent, bias=False)
        self.W_kr = nn.Linear(d_model, d_rope, bias=False)
        self.W_uk = nn.Linear(d_latent, num_heads * d_nope, bias=False)
        self.W_uv = nn.Linear(d_latent, num_heads * d_v, bias=False)
        self.W_o = nn.Linear(num_heads * d_v, d_model, bias=False)

    def forward(self, x, c_cache=None, k_rope_cache=None):
        B, S, _ = x.shape
        P = 0 if c_cache is None else c_cache.shape[1]
        pos = torch.arange(P, P + S, device=x.device)
        q = self.W_q(x).view(B, S, self.h, self.dn + self.dr)
        q_nope, q_pe = q[..., : self.dn], rope(q[..., self.dn:].transpose(1, 2), pos, self.base)  # (B,S,h,dn), (B,h,S,dr)
        c = self.W_dkv(x)
        k_pe = rope(self.W_kr(x), pos, self.base)
        if c_cache is not None:
            c = torch.cat([c_cache, c], dim=1)
            k_pe = torch.cat([k_rope_cache, k_pe], dim=1)
        W_uk = self.W_uk.weight.view(self.h, self.dn, self.dc)
        W_uv = self.W_uv.weight.view(self.h, self.dv, self.dc)
        q_lat = torch.einsum("bshn,hnc->bhsc", q_nope, W_uk)  # the query moved into the latent space
        scores = torch.einsum("bhsc,btc->bhst", q_lat, c) + torch.einsum("bhsr,btr->bhst", q_pe, k_pe)
        scores = scores / math.sqrt(self.dn + self.dr)
        T = c.shape[1]
        future = torch.arange(T, device=x.device)[None, :] > pos[:, None]
        p = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
        o_lat = torch.einsum("bhst,btc->bhsc", p, c)  # attention over the latents themselves
        o = torch.einsum("bhsc,hvc->bshv", o_lat, W_uv).reshape(B, S, self.h * self.dv)
        return self.W_o(o), c, k_pe
