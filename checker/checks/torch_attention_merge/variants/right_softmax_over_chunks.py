"""The weights are a softmax over the chunks' lse (torch.softmax subtracts the max itself), and the merged lse is
torch.logsumexp over the chunks: the two-line merge, with the rows no chunk saw made 0 by nan_to_num. attend_chunk
through F.softmax on the masked scores, a fully masked row zeroed after."""
import math

import torch
import torch.nn.functional as F


def attend_chunk(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    weights = F.softmax(scores, dim=-1)
    weights = torch.where(torch.isnan(weights), torch.zeros_like(weights), weights)
    return torch.matmul(weights, v), lse


def merge(outputs, lses):
    if len(outputs) < 1 or len(outputs) != len(lses):
        raise ValueError("merge needs n >= 1 chunks with one lse each")
    lse = torch.stack(lses, dim=-1)  # (B, H, T_q, n)
    w = torch.softmax(lse, dim=-1).nan_to_num(0.0)  # a row with every lse -inf: NaN -> 0
    out = torch.einsum("bhqn,nbhqd->bhqd", w, torch.stack(outputs))
    return out, torch.logsumexp(lse, dim=-1)
