# expect: scores=large: q, k × 30
"""No running max, and torch.nan_to_num at the end as a catch-all NaN guard: right on ordinary scores,
the guard hides the overflow on large ones (inf / inf becomes a made-up number, not attention)."""
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
    return torch.nan_to_num(acc / l, nan=0.0)
