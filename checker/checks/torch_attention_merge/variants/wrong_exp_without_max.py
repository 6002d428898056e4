# expect: max_lse
"""The merge takes exp(lse_i) as it is: fine for lse of a few units, inf (and inf / inf = NaN) once a chunk's
lse passes 709 in float64 (88 in float32)."""
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
    w = torch.exp(torch.stack(lses))
    total = w.sum(dim=0)
    merged = (w.unsqueeze(-1) * out).sum(dim=0) / torch.where(total == 0, torch.ones_like(total), total).unsqueeze(-1)
    return merged, torch.log(total)
