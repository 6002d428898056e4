# expect: changed the list handed as argument 2 (item 0 replaced)
"""merge shifts each chunk's lse by the largest one by assigning into the list it was handed (lses[i] = lses[i] - m):
the numbers are right, and the caller's list now holds the shifted tensors, not its own."""
import math

import torch


def attend_chunk(q, k, v, mask=None):
    if k.shape[-2] == 0:
        return q.new_zeros(*q.shape[:-1], v.shape[-1]), q.new_full(q.shape[:-1], float("-inf"))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    m = scores.amax(-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    p = torch.exp(scores - m)
    l = p.sum(-1, keepdim=True)
    return (p @ v) / l.clamp(min=1.0), (m + torch.log(l)).squeeze(-1)


def merge(outputs, lses):
    if not outputs or len(outputs) != len(lses):
        raise ValueError("one lse per output, at least one chunk")
    m = torch.stack(lses).amax(0)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    for i in range(len(lses)):
        lses[i] = lses[i] - m
    w = torch.exp(torch.stack(lses))
    total = w.sum(0)
    out = (w.unsqueeze(-1) * torch.stack(outputs)).sum(0) / total.clamp(min=1.0).unsqueeze(-1)
    return out, m + torch.log(total)
