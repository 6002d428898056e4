# expect: pass device=x.device
"""The causal mask built with no device: fine on the CPU, fails on a GPU."""

import math

import torch
from torch import Tensor


def alibi_slopes(num_heads: int) -> Tensor:
    """(H,) float64: 2^(-8(h+1)/H) for a power of two; else the authors' get_slopes rule."""
    n = 2 ** math.floor(math.log2(num_heads))  # the largest power of two <= H
    # 1) the n slopes of n heads: 2^(-8/n), 2^(-16/n), ..., 2^-8
    slopes = 2.0 ** (-8.0 * torch.arange(1, n + 1, dtype=torch.float64) / n)  # (n,)
    # 2) the first H - n even-indexed slopes of 2n heads, 2^(-8(h+1)/(2n)) for h = 0, 2, 4, ...: odd exponents
    odd = 2 * torch.arange(num_heads - n, dtype=torch.float64) + 1  # (H - n,): 1, 3, 5, ...
    extra = 2.0 ** (-8.0 * odd / (2 * n))  # (H - n,)
    return torch.cat([slopes, extra])  # (H,)


def alibi_bias(num_heads: int, T_q: int, T_k: int) -> Tensor:
    """(H, T_q, T_k) float64: -m_h * (i' - j), i' = i + T_k - T_q the absolute query position."""
    query_pos = torch.arange(T_k - T_q, T_k, dtype=torch.float64)  # (T_q,): the last T_q positions
    key_pos = torch.arange(T_k, dtype=torch.float64)  # (T_k,)
    distance = query_pos[:, None] - key_pos[None, :]  # (T_q, 1) - (1, T_k) -> (T_q, T_k)
    return -alibi_slopes(num_heads)[:, None, None] * distance  # (H, 1, 1) * (T_q, T_k) -> (H, T_q, T_k)


def alibi_attention(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """Causal attention with ALiBi: softmax(q k^T / sqrt(d_k) + bias) v, (B, H, T_q, d_v)."""
    _, H, T_q, d_k = q.shape
    *_, T_k, _ = k.shape  # k is (B, H, T_k, d_k)
    # 1) scaled scores plus the per-head linear bias (the bias is not scaled; k.mT swaps k's last two axes)
    scores = q @ k.mT / math.sqrt(d_k)  # (B, H, T_q, d_k) x (B, H, d_k, T_k) -> (B, H, T_q, T_k)
    scores = scores + alibi_bias(H, T_q, T_k).to(q)  # (H, T_q, T_k) broadcasts over B
    # 2) causal with the offset: query i (absolute position i + T_k - T_q) sees keys j <= i + T_k - T_q
    visible = torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q)
    scores = scores.masked_fill(~visible, float("-inf"))
    # 3) normalise over the keys and average the values
    return scores.softmax(dim=-1) @ v  # (B, H, T_q, T_k) x (B, H, T_k, d_v) -> (B, H, T_q, d_v)
