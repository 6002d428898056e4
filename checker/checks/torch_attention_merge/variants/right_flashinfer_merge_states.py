"""FlashInfer's state merging (include/flashinfer/attention/state.cuh, state_t::merge, used by merge_states over
num_index_sets): an online update of (o, m, d) one state at a time, in base 2 as FlashInfer keeps its lse.
Adapted: the natural-log lse of this contract is turned into base 2 on the way in (· log2 e) and back on the way
out (· ln 2); a state with m = -inf is skipped instead of giving exp2(-inf - -inf). attend_chunk with softmax and
logsumexp on a (T_q, T_c) loop-free einsum."""
import math

import torch

LOG2E = math.log2(math.e)
LN2 = math.log(2.0)


def attend_chunk(q, k, v, mask=None):
    s = torch.einsum("bhid,bhjd->bhij", q, k) * q.shape[-1] ** -0.5
    if mask is not None:
        s = torch.where(mask, s, torch.full_like(s, -math.inf))
    lse = torch.logsumexp(s, dim=-1)
    seen = ~torch.isneginf(lse)
    p = torch.exp(s - torch.where(seen, lse, torch.zeros_like(lse)).unsqueeze(-1))
    return torch.einsum("bhij,bhjd->bhid", p, v), lse


def merge(outputs, lses):
    if len(outputs) == 0 or len(lses) != len(outputs):
        raise ValueError("one lse per output, at least one chunk")
    o = torch.zeros_like(outputs[0])
    m = torch.full_like(lses[0], -math.inf)  # running max, base 2
    d = torch.zeros_like(lses[0])  # running sum of exp2(s - m)
    for o_i, s_i in zip(outputs, lses):
        s2 = s_i * LOG2E
        m_prev, d_prev = m, d
        m = torch.maximum(m_prev, s2)
        shift = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
        a = torch.exp2(m_prev - shift) * d_prev
        b = torch.exp2(s2 - shift)
        d = a + b
        safe = torch.where(d == 0, torch.ones_like(d), d)
        o = o * (a / safe).unsqueeze(-1) + o_i * (b / safe).unsqueeze(-1)
    shift = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    return o, (shift + torch.log2(d)) * LN2
