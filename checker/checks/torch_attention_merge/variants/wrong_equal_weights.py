# expect: lse
"""The merge averages the chunks' outputs with equal weights: a chunk of 2 keys counts as much as one of 9,
and a chunk whose scores are all low as much as the one that holds the attention."""
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
    lse = torch.stack(lses)
    seen = torch.isfinite(lse).to(lse.dtype)
    out = (torch.stack(outputs) * seen.unsqueeze(-1)).sum(dim=0) / seen.sum(dim=0).clamp(min=1).unsqueeze(-1)
    return out, torch.logsumexp(lse, dim=0)
