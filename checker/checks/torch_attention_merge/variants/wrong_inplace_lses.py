# expect: wrote into argument 2
"""The merge subtracts the max from the caller's lse tensors in place (lse.sub_), so the caller's chunks are
changed: merging them again, or caching them, gives other numbers."""
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
    m = torch.stack(lses).max(dim=0).values
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    total = torch.zeros_like(m)
    merged = torch.zeros_like(outputs[0])
    for o, s in zip(outputs, lses):
        s.sub_(m).exp_()
        total = total + s
        merged = merged + s.unsqueeze(-1) * o
    merged = merged / torch.where(total == 0, torch.ones_like(total), total).unsqueeze(-1)
    return merged, m + torch.log(total)
