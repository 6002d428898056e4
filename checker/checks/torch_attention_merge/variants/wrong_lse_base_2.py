# expect: log2
"""FlashInfer's convention written into this contract: its lse is in base 2 (log2 of the sum, exp2 in the
merge). Consistent with itself, but the contract's lse is the natural log-sum-exp, which other merges
(vLLM's, flash-attention's) read."""
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
    return p @ v, lse * math.log2(math.e)


def merge(outputs, lses):
    if len(outputs) == 0 or len(outputs) != len(lses):
        raise ValueError("one lse per output, at least one chunk")
    out = torch.stack(outputs)
    lse = torch.stack(lses)
    m = lse.max(dim=0).values
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    w = torch.exp2(lse - m)
    total = w.sum(dim=0)
    merged = (w.unsqueeze(-1) * out).sum(dim=0) / total.clamp(min=1e-300).unsqueeze(-1)
    return merged, m + torch.log2(total)
