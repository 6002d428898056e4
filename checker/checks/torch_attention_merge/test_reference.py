"""The reference attend_chunk and merge equal vLLM's merge rule and attention over all the keys.

vLLM: merge_attn_states_torch, the torch reference of csrc/attention/merge_attn_states.cu in
tests/kernels/attention/test_merge_attn_states.py (vllm-project/vllm), re-typed offline: lse laid out
(NUM_HEADS, NUM_TOKENS), outputs (NUM_TOKENS, NUM_HEADS, HEAD_SIZE), a prefix and a suffix merged.
The formula: softmax(q kᵀ / √d_k) v and torch.logsumexp over all the keys at once.
"""

import math

import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_attention_merge import checks as spec

solution = engine.load_solution(catalogue.find("attention_merge"))


def merge_attn_states_torch(prefix_output, prefix_lse, suffix_output, suffix_lse):
    """vLLM's function, unchanged but for the output_lse argument, returned instead of written."""
    p_lse = prefix_lse.clone()
    s_lse = suffix_lse.clone()
    # inf -> -inf
    p_lse[p_lse == torch.inf] = -torch.inf
    s_lse[s_lse == torch.inf] = -torch.inf
    # max_lse [NUM_HEADS, NUM_TOKENS]
    max_lse = torch.maximum(p_lse, s_lse)
    p_lse = p_lse - max_lse
    s_lse = s_lse - max_lse
    p_lse_exp = torch.exp(p_lse)
    s_lse_exp = torch.exp(s_lse)
    out_se = p_lse_exp + s_lse_exp
    output_lse = torch.log(out_se) + max_lse
    p_scale = p_lse_exp / out_se
    s_scale = s_lse_exp / out_se
    p_scale = torch.transpose(p_scale, 0, 1).unsqueeze(2)  # [NUM_TOKENS, NUM_HEADS, 1]
    s_scale = torch.transpose(s_scale, 0, 1).unsqueeze(2)  # [NUM_TOKENS, NUM_HEADS, 1]
    output = prefix_output * p_scale + suffix_output * s_scale
    return output, output_lse


def _full_attention(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v, torch.logsumexp(s, dim=-1)


@pytest.mark.parametrize("split", [1, 4, 9])
def test_merge_of_two_equals_vllms_merge_attn_states(split):
    g = torch.Generator().manual_seed(split)
    T, H, D, T_k = 5, 3, 4, 11  # vLLM's layout: tokens (queries) first
    q = torch.randn(1, H, T, D, generator=g, dtype=torch.float64)
    k = 3 * torch.randn(1, H, T_k, D, generator=g, dtype=torch.float64)
    v = torch.randn(1, H, T_k, D, generator=g, dtype=torch.float64)
    prefix = solution.attend_chunk(q, k[..., :split, :], v[..., :split, :])
    suffix = solution.attend_chunk(q, k[..., split:, :], v[..., split:, :])
    to_vllm = lambda o: o[0].permute(1, 0, 2)  # (1, H, T, D) -> (T, H, D)
    want_out, want_lse = merge_attn_states_torch(to_vllm(prefix[0]), prefix[1][0], to_vllm(suffix[0]), suffix[1][0])
    got_out, got_lse = solution.merge([prefix[0], suffix[0]], [prefix[1], suffix[1]])
    torch.testing.assert_close(to_vllm(got_out), want_out, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got_lse[0], want_lse, rtol=1e-12, atol=1e-12)


def test_vllms_torch_reference_gives_nan_where_both_lse_are_minus_inf_and_the_reference_zero():
    """The convention the contract states: a row no chunk saw gets 0 and -inf, where vLLM's torch reference gives NaN."""
    lse = torch.full((2, 3), float("-inf"), dtype=torch.float64)
    out = torch.zeros(3, 2, 4, dtype=torch.float64)
    vllm_out, _ = merge_attn_states_torch(out, lse, out, lse)
    assert torch.isnan(vllm_out).all()
    got_out, got_lse = solution.merge([out.permute(1, 0, 2)[None]] * 2, [lse[None]] * 2)
    assert torch.equal(got_out, torch.zeros_like(got_out)) and torch.isneginf(got_lse).all()


@pytest.mark.parametrize("c", spec._MERGE_CASES, ids=lambda c: c.label)
def test_chunks_merged_equal_attention_over_all_keys(c):
    whole, parts = spec._chunks(c)
    want_out, want_lse = _full_attention(*whole)
    results = [solution.attend_chunk(*part) for part in parts]
    got_out, got_lse = solution.merge([r[0] for r in results], [r[1] for r in results])
    torch.testing.assert_close(got_out, want_out, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(got_lse, want_lse, rtol=1e-12, atol=1e-10)


def test_the_merge_cases_hold_what_their_comments_say():
    hidden, empty, large = spec._MERGE_CASES[0], spec._MERGE_CASES[1], spec._MERGE_CASES[3]
    assert torch.isneginf(spec.merge_inputs(hidden)[1][-1][1]).all()  # the last chunk hidden from batch row 1
    assert any(a == b for a, b in spec._bounds(empty))  # an empty chunk
    assert max(float(s.max()) for s in spec.merge_inputs(large)[1]) > 709.8  # exp overflows in float64
    lse = spec.inputs(spec._BLIND, "float64")
    out, blind_lse = solution.attend_chunk(*lse)
    assert torch.isneginf(blind_lse).sum() > 0 and torch.isfinite(blind_lse).sum() > 0


def test_a_fully_masked_row_and_an_empty_chunk_give_zero_and_minus_inf():
    q, k, v, mask = spec.inputs(spec._BLIND, "float64")
    out, lse = solution.attend_chunk(q, k, v, mask)
    blind = ~mask.any(dim=-1)
    assert torch.isneginf(lse[blind]).all() and torch.equal(out[blind], torch.zeros_like(out[blind]))
    torch.testing.assert_close(out[~blind], _full_attention(q, k, v, mask)[0][~blind], rtol=1e-12, atol=1e-12)
    q, k, v, _ = spec.inputs(spec._EMPTY, "float64")
    out, lse = solution.attend_chunk(q, k, v)
    assert out.shape == (2, 3, 4, 6) and torch.equal(out, torch.zeros_like(out)) and torch.isneginf(lse).all()
