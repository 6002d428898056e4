# expect: a term dropped from a sum, or a factor from a product
"""Rescales l when the max grows, forgets to rescale the accumulator."""
import math

import torch


def flash_attention(q, k, v, causal=False, block_size=16):
    T_q, T_k = q.size(-2), k.size(-2)
    m = torch.full(q.shape[:-1] + (1,), float("-inf"), dtype=q.dtype, device=q.device)
    l = torch.zeros_like(m)
    acc = torch.zeros(q.shape[:-1] + (v.size(-1),), dtype=q.dtype, device=q.device)
    for start in range(0, T_k, block_size):
        end = min(start + block_size, T_k)
        s = q @ k[:, :, start:end].transpose(-2, -1) / math.sqrt(q.size(-1))
        if causal:
            i = torch.arange(T_q, device=q.device)[:, None] + (T_k - T_q)
            j = torch.arange(start, end, device=q.device)[None, :]
            s = s.masked_fill(j > i, float("-inf"))
        m_new = torch.maximum(m, s.max(dim=-1, keepdim=True).values)
        safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        p = torch.exp(s - safe)
        l = l * torch.exp(m - safe) + p.sum(-1, keepdim=True)
        acc = acc + p @ v[:, :, start:end]  # BUG: acc is not multiplied by exp(m - m_new)
        m = m_new
    return torch.where(l > 0, acc / l.clamp_min(1e-300), torch.zeros_like(acc))
