# expect: one variable read where another belongs
"""Copy-paste: the new values are appended to the KEY cache."""

import math

import torch
from torch import Tensor, nn


class CachedSelfAttention(nn.Module):
    """Multi-head causal self-attention over cache + new positions; returns (out, k_cache, v_cache)."""

    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _split_heads(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, T, D) -> (B, H, T, d_k)

    def forward(self, x: Tensor, k_cache: Tensor | None = None,
                v_cache: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
        B, T_new, D = x.shape
        # 1) project the new positions only
        Q = self._split_heads(self.W_q(x))  # (B, H, T_new, d_k)
        K = self._split_heads(self.W_k(x))  # (B, H, T_new, d_k)
        V = self._split_heads(self.W_v(x))  # (B, H, T_new, d_k)
        # 2) append to the cache on the time axis (torch.cat makes new tensors: the caller's stay intact)
        if k_cache is not None:
            K = torch.cat([k_cache, K], dim=2)  # (B, H, T_past, d_k) + (B, H, T_new, d_k) -> (B, H, T, d_k)
            V = torch.cat([k_cache, V], dim=2)  # (B, H, T, d_k)
        T_past = K.size(2) - T_new
        # 3) causal mask offset by T_past: new query i sees keys 0 .. T_past + i
        visible = torch.ones(T_new, T_past + T_new, dtype=torch.bool, device=x.device).tril(diagonal=T_past)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, H, T_new, d_k) x (B, H, d_k, T) -> (B, H, T_new, T)
        attn = scores.masked_fill(~visible, float("-inf")).softmax(dim=-1)
        out = attn @ V  # (B, H, T_new, T) x (B, H, T, d_k) -> (B, H, T_new, d_k)
        # 4) combine the heads and project
        out = self.W_o(out.transpose(1, 2).reshape(B, T_new, D))  # (B, H, T_new, d_k) -> (B, T_new, H, d_k) -> (B, T_new, D)
        return out, K, V
