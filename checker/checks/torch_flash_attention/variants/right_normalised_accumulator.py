"""FlashAttention-1's update: the output is kept normalised after every tile,
O = (l_old · exp(m_old - m_new) · O + P V) / l_new, with -1e30 instead of -inf for hidden keys."""
import math

import torch

NEG = -1e30


def flash_attention(q, k, v, causal=False, block_size=16):
    B, H, T_q, d_k = q.shape
    T_k = k.shape[2]
    m = q.new_full((B, H, T_q, 1), NEG)
    l = q.new_zeros((B, H, T_q, 1))
    o = q.new_zeros((B, H, T_q, v.shape[-1]))
    seen = q.new_zeros((1, 1, T_q, 1), dtype=torch.bool)  # has the query seen any key yet?
    for start in range(0, T_k, block_size):
        stop = min(start + block_size, T_k)
        s = torch.matmul(q, k[:, :, start:stop].transpose(2, 3)) / math.sqrt(d_k)
        visible = None
        if causal:
            pos_q = torch.arange(T_q, device=q.device).view(T_q, 1) + T_k - T_q
            visible = torch.arange(start, stop, device=q.device).view(1, -1) <= pos_q
            s = s.masked_fill(~visible, NEG)
            seen = seen | visible.any(dim=-1, keepdim=True)
        else:
            seen = seen | True
        m_new = torch.max(m, s.max(dim=-1, keepdim=True)[0])
        p = torch.exp(s - m_new)
        if visible is not None:
            p = p * visible  # NEG - NEG = 0 would give weight 1 to hidden keys of a query that sees none yet
        l_new = torch.exp(m - m_new) * l + p.sum(dim=-1, keepdim=True)
        safe = torch.where(l_new > 0, l_new, torch.ones_like(l_new))
        o = (l * torch.exp(m - m_new) * o + p @ v[:, :, start:stop]) / safe
        m, l = m_new, l_new
    return o * seen
