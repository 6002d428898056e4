"""FlashAttention-2's loop order: an outer loop over query tiles, an inner loop over key tiles, einsum,
torch.where for the mask, and tiles skipped entirely when they lie in a query tile's future."""
import math

import torch


def flash_attention(q, k, v, causal=False, block_size=16):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scale = q.shape[-1] ** -0.5
    outs = []
    for qs in range(0, T_q, block_size):
        qt = q[:, :, qs:qs + block_size]
        n = qt.shape[-2]
        m = torch.full(qt.shape[:-1], -math.inf, dtype=q.dtype, device=q.device)  # (B, H, n)
        l = torch.zeros_like(m)
        o = torch.zeros(*qt.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
        last_visible = qs + n - 1 + (T_k - T_q)  # the last key any query of this tile may see
        for ks in range(0, T_k, block_size):
            if causal and ks > last_visible:
                break
            kt, vt = k[:, :, ks:ks + block_size], v[:, :, ks:ks + block_size]
            s = torch.einsum("bhqd,bhkd->bhqk", qt, kt) * scale
            if causal:
                qi = torch.arange(qs, qs + n, device=q.device).unsqueeze(-1) + (T_k - T_q)
                kj = torch.arange(ks, ks + kt.shape[-2], device=q.device)
                s = torch.where(kj <= qi, s, torch.tensor(-math.inf, dtype=s.dtype, device=s.device))
            m_new = torch.maximum(m, s.max(dim=-1).values)
            m_used = torch.where(torch.isfinite(m_new), m_new, torch.zeros_like(m_new))
            p = torch.exp(s - m_used.unsqueeze(-1))
            corr = torch.exp(m - m_used)
            l = corr * l + p.sum(dim=-1)
            o = corr.unsqueeze(-1) * o + torch.einsum("bhqk,bhkd->bhqd", p, vt)
            m = m_new
        outs.append(torch.where(l.unsqueeze(-1) > 0, o / l.clamp(min=torch.finfo(l.dtype).tiny).unsqueeze(-1), 0.0))
    return torch.cat(outs, dim=-2)
