# expect: out
"""The chunk's output is Σ_j exp(s_j - m) v_j, the unnormalised accumulator of flash attention, returned without
dividing by l = Σ_j exp(s_j - m)."""
import math

import torch


def attend_chunk(q, k, v, mask=None):
    B, H, T_q, d_k = q.shape
    if k.shape[-2] == 0:
        return q.new_zeros(B, H, T_q, v.shape[-1]), q.new_full((B, H, T_q), float("-inf"))
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    m = scores.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    p = torch.exp(scores - m)
    l = p.sum(dim=-1, keepdim=True)
    return p @ v, (m + torch.log(l)).squeeze(-1)


def merge(outputs, lses):
    if len(outputs) == 0 or len(outputs) != len(lses):
        raise ValueError("one lse per output, at least one chunk")
    out = torch.stack(outputs)
    lse = torch.stack(lses)
    m = lse.max(dim=0).values
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    w = torch.exp(lse - m)
    total = w.sum(dim=0)
    merged = (w.unsqueeze(-1) * out).sum(dim=0) / total.clamp(min=1e-300).unsqueeze(-1)
    return merged, m + torch.log(total)
