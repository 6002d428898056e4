# expect: lse
"""Hidden keys get -1e30 instead of -inf, and the chunk's lse is torch.logsumexp of those scores: a row that sees no
key of the chunk gets lse = -1e30 + log T_c, a finite number, where the contract's is -inf (log 0). Any row that
sees a key is right."""
import math

import torch


def attend_chunk(q, k, v, mask=None):
    if k.shape[-2] == 0:
        return q.new_zeros(*q.shape[:-1], v.shape[-1]), q.new_full(q.shape[:-1], float("-inf"))
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e30)
    lse = torch.logsumexp(scores, dim=-1)
    weights = torch.exp(scores - lse[..., None])
    if mask is not None:
        weights = weights * mask
    return weights @ v, lse


def merge(outputs, lses):
    if not outputs or len(outputs) != len(lses):
        raise ValueError("merge needs one lse per chunk, and at least one chunk")
    stacked = torch.stack(lses)
    top = stacked.amax(0)
    top = torch.where(top.isneginf(), torch.zeros_like(top), top)
    w = torch.exp(stacked - top)
    total = w.sum(0)
    out = sum(wi[..., None] * oi for wi, oi in zip(w, outputs)) / total.clamp(min=1e-300)[..., None]
    return torch.where(total[..., None] > 0, out, torch.zeros_like(out)), top + torch.log(total)
