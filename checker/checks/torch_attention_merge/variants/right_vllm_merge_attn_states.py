"""vLLM's merge rule: merge_attn_states_torch of tests/kernels/attention/test_merge_attn_states.py (the torch
reference of csrc/attention/merge_attn_states.cu), re-typed for (B, H, T_q) lse and folded over the chunks two at a
time. Adapted: vLLM's inf -> -inf is kept (flash-attention reports +inf for a row with no key); the shift by 0 where
both lse are -inf is this contract's (vLLM's torch reference gives NaN there). attend_chunk with torch.logsumexp
and softmax, as vLLM's reference attention in its tests."""
import math

import torch


def attend_chunk(q, k, v, mask=None):
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    probs = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # a row with no visible key: 0 / 0
    return torch.einsum("bhqk,bhkd->bhqd", probs, v), lse


def merge_attn_states_torch(prefix_output, prefix_lse, suffix_output, suffix_lse):
    p_lse = prefix_lse.clone()
    s_lse = suffix_lse.clone()
    # inf -> -inf
    p_lse[p_lse == torch.inf] = -torch.inf
    s_lse[s_lse == torch.inf] = -torch.inf
    max_lse = torch.maximum(p_lse, s_lse)
    max_lse = torch.where(torch.isinf(max_lse), torch.zeros_like(max_lse), max_lse)  # both -inf: nothing seen
    p_lse = p_lse - max_lse
    s_lse = s_lse - max_lse
    p_lse_exp = torch.exp(p_lse)
    s_lse_exp = torch.exp(s_lse)
    out_se = p_lse_exp + s_lse_exp
    output_lse = torch.log(out_se) + max_lse
    out_se = torch.where(out_se == 0, torch.ones_like(out_se), out_se)
    p_scale = (p_lse_exp / out_se).unsqueeze(-1)
    s_scale = (s_lse_exp / out_se).unsqueeze(-1)
    output = prefix_output * p_scale + suffix_output * s_scale
    return output, output_lse


def merge(outputs, lses):
    if len(outputs) == 0 or len(outputs) != len(lses):
        raise ValueError("one lse per output, at least one chunk")
    out, lse = outputs[0], lses[0]
    for o, s in zip(outputs[1:], lses[1:]):
        out, lse = merge_attn_states_torch(out, lse, o, s)
    return out, lse
