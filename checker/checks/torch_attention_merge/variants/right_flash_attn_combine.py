"""flash-attention's split-KV path (flash_fwd_kernel.h): each split keeps the running max m and sum l of
softmax_rescale_o, its lse = m·scale + log(l) (the scores scaled inside exp2 with log2(e), as scale_softmax_log2),
and combine_attn_seqk_parallel merges the splits: lse_max (0 when every lse is -inf), lse_logsum, then each split
scaled by exp(lse_s - lse_logsum). Adapted: torch on whole tensors instead of tiles, and a row with no key reports
lse = -inf (flash-attention writes +inf there)."""
import math

import torch

LOG2E = 1.4426950408889634


def attend_chunk(q, k, v, mask=None):
    B, H, T_q, d = q.shape
    if k.shape[-2] == 0:
        return q.new_zeros(B, H, T_q, v.shape[-1]), q.new_full((B, H, T_q), -math.inf)
    softmax_scale = 1.0 / math.sqrt(d)
    s = q @ k.transpose(-1, -2)  # unscaled, as the kernel's acc_s
    if mask is not None:
        s = s.masked_fill(~mask, -math.inf)
    row_max = s.max(dim=-1, keepdim=True).values
    max_scaled = torch.where(row_max == -math.inf, 0.0, row_max * (softmax_scale * LOG2E))
    p = torch.exp2(s * (softmax_scale * LOG2E) - max_scaled)
    row_sum = p.sum(dim=-1, keepdim=True)
    inv_sum = torch.where(row_sum == 0, 0.0, 1.0 / row_sum)
    lse = torch.where(row_sum == 0, -math.inf, row_max * softmax_scale + torch.log(row_sum))
    return (p @ v) * inv_sum, lse.squeeze(-1)


def merge(outputs, lses):
    if not outputs or len(outputs) != len(lses):
        raise ValueError("one lse per output, at least one chunk")
    out_accum = torch.stack(outputs)
    lse_accum = torch.stack(lses)
    lse_max = lse_accum.max(dim=0).values
    lse_max = torch.where(lse_max == -math.inf, 0.0, lse_max)  # in case all local LSEs are -inf
    lse_sum = torch.exp(lse_accum - lse_max).sum(dim=0)
    lse_logsum = torch.where((lse_sum == 0) | torch.isnan(lse_sum), math.inf, torch.log(lse_sum) + lse_max)
    scale = torch.exp(lse_accum - lse_logsum)
    out = (scale.unsqueeze(-1) * out_accum).sum(dim=0)
    return out, torch.where(lse_logsum == math.inf, -math.inf, lse_logsum)
