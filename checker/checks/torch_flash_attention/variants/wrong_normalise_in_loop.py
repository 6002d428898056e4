# expect: dividing the accumulator by l inside the loop
"""Keeps the output normalised after every tile, but rescales the old output by exp(m_old - m_new) only."""
import math

import torch


def flash_attention(q, k, v, causal=False, block_size=16):
    T_q, T_k = q.size(-2), k.size(-2)
    m = q.new_full((*q.shape[:-1], 1), float("-inf"))
    l = q.new_zeros((*q.shape[:-1], 1))
    out = q.new_zeros((*q.shape[:-1], v.size(-1)))
    for start in range(0, T_k, block_size):
        s = q @ k[..., start:start + block_size, :].transpose(-2, -1) / math.sqrt(q.size(-1))
        if causal:
            i = torch.arange(T_q, device=q.device)[:, None] + (T_k - T_q)
            j = torch.arange(start, start + s.size(-1), device=q.device)
            s = s.masked_fill(j > i, float("-inf"))
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        safe = m_new.nan_to_num(neginf=0.0)
        p = torch.exp(s - safe)
        alpha = torch.exp(m - safe)
        l = l * alpha + p.sum(-1, keepdim=True)
        out = (out * alpha + p @ v[..., start:start + block_size, :]) / l.clamp_min(1e-300)  # BUG: needs out * l_old
        m = m_new
    return out
