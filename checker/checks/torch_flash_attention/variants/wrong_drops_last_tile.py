# expect: last, shorter tile
"""Counts the tiles as T_k // block_size: the last, shorter tile is never visited."""
import math

import torch


def flash_attention(q, k, v, causal=False, block_size=16):
    T_q, T_k = q.size(-2), k.size(-2)
    m = q.new_full((*q.shape[:-1], 1), float("-inf"))
    l = q.new_zeros((*q.shape[:-1], 1))
    acc = q.new_zeros((*q.shape[:-1], v.size(-1)))
    for t in range(max(1, T_k // block_size)):  # BUG: drops the tail
        start = t * block_size
        kt, vt = k[..., start:start + block_size, :], v[..., start:start + block_size, :]
        s = q @ kt.transpose(-2, -1) / math.sqrt(q.size(-1))
        if causal:
            i = torch.arange(T_q, device=q.device)[:, None] + (T_k - T_q)
            j = torch.arange(start, start + kt.size(-2), device=q.device)
            s = s.masked_fill(j > i, float("-inf"))
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        safe = m_new.masked_fill(torch.isinf(m_new), 0.0)
        p = torch.exp(s - safe)
        alpha = torch.exp(m - safe)
        l = l * alpha + p.sum(-1, keepdim=True)
        acc = acc * alpha + p @ vt
        m = m_new
    return acc / l.masked_fill(l == 0, 1.0)
