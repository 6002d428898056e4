# expect: lse
"""The merged lse is log Σ_i exp(lse_i - max): the max subtracted for stability is never added back, so the
lse of a cascade (merging merged chunks again) is off by the max."""
import math

import torch


def attend_chunk(q, k, v, mask=None):
    B, H, T_q, d_k = q.shape
    if k.shape[-2] == 0:
        return q.new_zeros(B, H, T_q, v.shape[-1]), q.new_full((B, H, T_q), float("-inf"))
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    seen = torch.isfinite(lse).unsqueeze(-1)
    p = torch.exp(scores - torch.where(seen, lse.unsqueeze(-1), torch.zeros_like(lse).unsqueeze(-1)))
    return p @ v, lse


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
    return merged, torch.log(total)
