# expect: a term dropped from a sum, or a factor from a product
"""The scores scaled by the nope size only, as if the RoPE part were not in the head."""
import math

import torch
from torch import Tensor, nn


def rope(x: Tensor, positions: Tensor, base: float) -> Tensor:
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=x.dtype, device=x.device) / d)  # (d/2,)
    angle = positions.to(x.dtype)[:, None] * theta  # (T, 1) * (d/2,) -> (T, d/2)
    cos, sin = angle.cos(), angle.sin()  # (T, d/2)
    a, b = x.chunk(2, dim=-1)  # (..., T, d/2) each
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)  # (..., T, d)


class MultiHeadLatentAttention(nn.Module):

    def __init__(self, d_model: int, num_heads: int, d_latent: int, d_nope: int, d_rope: int, d_v: int,
                 base: float = 10000.0):
        super().__init__()
        self.H, self.d_nope, self.d_rope, self.d_v, self.base = num_heads, d_nope, d_rope, d_v, base
        self.W_q = nn.Linear(d_model, num_heads * (d_nope + d_rope), bias=False)  # [q_nope | q_rope] per head
        self.W_dkv = nn.Linear(d_model, d_latent, bias=False)  # down: x -> c_kv
        self.W_kr = nn.Linear(d_model, d_rope, bias=False)  # the decoupled RoPE key, one for all heads
        self.W_uk = nn.Linear(d_latent, num_heads * d_nope, bias=False)  # up: c_kv -> k_nope per head
        self.W_uv = nn.Linear(d_latent, num_heads * d_v, bias=False)  # up: c_kv -> v per head
        self.W_o = nn.Linear(num_heads * d_v, d_model, bias=False)

    def forward(self, x: Tensor, c_cache: Tensor | None = None,
                k_rope_cache: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
        B, T_new, _ = x.shape
        T_past = 0 if c_cache is None else c_cache.size(1)
        positions = torch.arange(T_past, T_past + T_new, device=x.device)  # (T_new,) absolute positions
        # 1) queries: a position-free part and a RoPE part per head
        q = self.W_q(x).view(B, T_new, self.H, self.d_nope + self.d_rope).transpose(1, 2)  # (B, H, T_new, d_nope + d_rope)
        q_nope, q_rope = q.split([self.d_nope, self.d_rope], dim=-1)  # (B, H, T_new, d_nope), (B, H, T_new, d_rope)
        q_rope = rope(q_rope, positions, self.base)
        # 2) the cache: the latent and the rotated RoPE key of every position, appended on the time axis
        c_kv = self.W_dkv(x)  # (B, T_new, d_latent)
        k_rope = rope(self.W_kr(x), positions, self.base)  # (B, T_new, d_rope)
        if c_cache is not None:
            c_kv = torch.cat([c_cache, c_kv], dim=1)  # (B, T, d_latent)
            k_rope = torch.cat([k_rope_cache, k_rope], dim=1)  # (B, T, d_rope)
        T = c_kv.size(1)
        # 3) keys and values per head, rebuilt from the latent; the RoPE key is shared by every head
        k_nope = self.W_uk(c_kv).view(B, T, self.H, self.d_nope).transpose(1, 2)  # (B, H, T, d_nope)
        v = self.W_uv(c_kv).view(B, T, self.H, self.d_v).transpose(1, 2)  # (B, H, T, d_v)
        k = torch.cat([k_nope, k_rope[:, None].expand(B, self.H, T, self.d_rope)], dim=-1)  # (B, H, T, d_nope + d_rope)
        q = torch.cat([q_nope, q_rope], dim=-1)  # (B, H, T_new, d_nope + d_rope)
        # 4) causal attention with the offset T_past, scaled over the whole query head
        scores = q @ k.mT / math.sqrt(self.d_nope)  # (B, H, T_new, T)
        visible = torch.ones(T_new, T, dtype=torch.bool, device=x.device).tril(T_past)  # (T_new, T)
        weights = scores.masked_fill(~visible, float("-inf")).softmax(dim=-1)  # (B, H, T_new, T)
        out = (weights @ v).transpose(1, 2).reshape(B, T_new, self.H * self.d_v)  # (B, H, T_new, d_v) -> (B, T_new, H d_v)
        return self.W_o(out), c_kv, k_rope  # (B, T_new, D), (B, T, d_latent), (B, T, d_rope)
