# expect: -inf
"""vLLM's merge_attn_states_torch (tests/kernels/attention/test_merge_attn_states.py) as it is, folded over the
chunks: where both lse are -inf, max_lse is -inf and p_lse - max_lse is -inf - (-inf) = NaN, so a row that sees
no key in any chunk gets NaN instead of 0 (its CUDA kernel has the same arithmetic)."""
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


def merge_attn_states_torch(prefix_output, prefix_lse, suffix_output, suffix_lse):
    p_lse = prefix_lse.clone()
    s_lse = suffix_lse.clone()
    p_lse[p_lse == torch.inf] = -torch.inf
    s_lse[s_lse == torch.inf] = -torch.inf
    max_lse = torch.maximum(p_lse, s_lse)
    p_lse = p_lse - max_lse
    s_lse = s_lse - max_lse
    p_lse_exp = torch.exp(p_lse)
    s_lse_exp = torch.exp(s_lse)
    out_se = p_lse_exp + s_lse_exp
    output_lse = torch.log(out_se) + max_lse
    p_scale = (p_lse_exp / out_se).unsqueeze(-1)
    s_scale = (s_lse_exp / out_se).unsqueeze(-1)
    return prefix_output * p_scale + suffix_output * s_scale, output_lse


def merge(outputs, lses):
    if len(outputs) == 0 or len(outputs) != len(lses):
        raise ValueError("one lse per output, at least one chunk")
    out, lse = outputs[0], lses[0]
    for o, s in zip(outputs[1:], lses[1:]):
        out, lse = merge_attn_states_torch(out, lse, o, s)
    return out, lse
