# expect: without subtracting a running max
"""Tiles and sums exp(scores) directly: exact in exact arithmetic, overflows on large scores."""
import math

import torch


def flash_attention(q, k, v, causal=False, block_size=16):
    T_q, T_k = q.size(-2), k.size(-2)
    l = q.new_zeros((*q.shape[:-1], 1))
    acc = q.new_zeros((*q.shape[:-1], v.size(-1)))
    for start in range(0, T_k, block_size):
        s = q @ k[..., start:start + block_size, :].transpose(-2, -1) / math.sqrt(q.size(-1))
        if causal:
            i = torch.arange(T_q, device=q.device)[:, None] + (T_k - T_q)
            j = torch.arange(start, start + s.size(-1), device=q.device)
            s = s.masked_fill(j > i, float("-inf"))
        p = torch.exp(s)  # BUG: no max subtracted
        l = l + p.sum(-1, keepdim=True)
        acc = acc + p @ v[..., start:start + block_size, :]
    return acc / l.masked_fill(l == 0, 1.0)
