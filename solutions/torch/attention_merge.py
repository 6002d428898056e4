"""Flash-decoding's split-KV attention: attend over one chunk of keys, then merge the chunks (reference answer).

Shape legend:
    B    batch size
    H    number of heads
    T_q  query length
    T_c  keys (and values) in one chunk; 0 for an empty chunk
    d_k  query/key size per head
    d_v  value size per head
    n    number of chunks merged

A chunk returns its attention output, normalised over its own keys, and the log-sum-exp of its scaled
scores. A row that sees no key of the chunk (fully masked, or T_c = 0) has lse = -inf and output 0.
The merge weighs each chunk by exp(lse_i - lse), as vLLM's merge_attn_states and flash-attention's
split-KV combine do: the result equals attention over all the keys at once.
"""

import math

import torch
from torch import Tensor


def attend_chunk(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Attention of q over one chunk of keys: (output normalised within the chunk, log-sum-exp of the scores)."""
    B, H, T_q, d_k = q.shape
    _, _, T_c, d_v = v.shape
    if T_c == 0:  # an empty chunk: no key, so lse = log 0 = -inf and the output is 0
        return q.new_zeros((B, H, T_q, d_v)), q.new_full((B, H, T_q), float("-inf"))
    # 1) scaled scores over the chunk's keys; a hidden key scores -inf
    scores = q @ k.mT / math.sqrt(d_k)  # (B, H, T_q, d_k) x (B, H, d_k, T_c) -> (B, H, T_q, T_c)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # mask: True = visible
    # 2) the row's max; a row that sees no key (max -inf) is shifted by 0, so that exp gives 0, not NaN
    m = scores.amax(dim=-1, keepdim=True)  # (B, H, T_q, 1)
    shift = torch.where(m.isneginf(), torch.zeros_like(m), m)
    # 3) the exponentials and their sum
    p = torch.exp(scores - shift)  # (B, H, T_q, T_c)
    l = p.sum(dim=-1, keepdim=True)  # (B, H, T_q, 1); 0 where no key is visible
    # 4) the output normalised over this chunk, and lse = max + log l
    # l >= 1 where a key is visible (the max's own exp(0) = 1), else 0: clamp(min=1) gives 0 / 1 = 0 there
    out = (p @ v) / l.clamp(min=1.0)  # (B, H, T_q, T_c) x (B, H, T_c, d_v) -> (B, H, T_q, d_v)
    lse = (shift + torch.log(l)).squeeze(-1)  # (B, H, T_q, 1) -> (B, H, T_q)
    return out, lse


def merge(outputs: list[Tensor], lses: list[Tensor]) -> tuple[Tensor, Tensor]:
    """Combine n chunks' (output, lse) into the output and lse of attention over all their keys."""
    if len(outputs) == 0 or len(outputs) != len(lses):
        raise ValueError("merge needs at least one chunk, and one lse per output")
    # 1) stack the chunks on a new leading axis
    out = torch.stack(outputs, dim=0)  # n x (B, H, T_q, d_v) -> (n, B, H, T_q, d_v)
    lse = torch.stack(lses, dim=0)  # n x (B, H, T_q) -> (n, B, H, T_q)
    # 2) the largest lse of each row; a row that no chunk saw (all -inf) is shifted by 0
    max_lse = lse.amax(dim=0)  # (B, H, T_q)
    shift = torch.where(max_lse.isneginf(), torch.zeros_like(max_lse), max_lse)
    # 3) each chunk's softmax mass, relative to the largest: exp(-inf) = 0 ignores an empty chunk
    w = torch.exp(lse - shift)  # (n, B, H, T_q)
    total = w.sum(dim=0)  # (B, H, T_q); 0 where no chunk saw a key
    # 4) the chunks' outputs weighed by their share of the mass, and the lse of all the keys
    # total >= 1 where a chunk saw a key (the largest weighs exp(0) = 1), else 0: clamp(min=1) gives 0 / 1 = 0 there
    merged = (w.unsqueeze(-1) * out).sum(dim=0) / total.clamp(min=1.0).unsqueeze(-1)  # (n, B, H, T_q, d_v) -> (B, H, T_q, d_v)
    merged_lse = shift + torch.log(total)  # (B, H, T_q); -inf where no chunk saw a key
    return merged, merged_lse
