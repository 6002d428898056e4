# expect: build a tile's causal mask from positions
"""A correct online softmax, but the causal mask is built once as a (T_q, T_k) tensor and sliced."""
import math

import torch


def flash_attention(q, k, v, causal=False, block_size=16):
    T_q, T_k = q.size(-2), k.size(-2)
    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril(T_k - T_q)  # (T_q, T_k): too big
    m = q.new_full((*q.shape[:-1], 1), float("-inf"))
    l = q.new_zeros((*q.shape[:-1], 1))
    acc = q.new_zeros((*q.shape[:-1], v.size(-1)))
    for start in range(0, T_k, block_size):
        s = q @ k[..., start:start + block_size, :].transpose(-2, -1) / math.sqrt(q.size(-1))
        if causal:
            s = s.masked_fill(~visible[:, start:start + block_size], float("-inf"))
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        safe = m_new.masked_fill(m_new == float("-inf"), 0.0)
        p = torch.exp(s - safe)
        alpha = torch.exp(m - safe)
        l = l * alpha + p.sum(-1, keepdim=True)
        acc = acc * alpha + p @ v[..., start:start + block_size, :]
        m = m_new
    return acc / l.masked_fill(l == 0, 1.0)
