"""The reference CachedSelfAttention, decoding step by step, agrees with torch.nn.MultiheadAttention run
causally over the whole sequence (weights mapped), in float64; its caches hold the K/V projections."""

import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_kv_cache import checks as spec

solution = engine.load_solution(catalogue.find("kv_cache"))


def builtin_from(ours, d_model, heads):
    """nn.MultiheadAttention holding our weights: in_proj = cat(W_q, W_k, W_v), out_proj = W_o."""
    theirs = nn.MultiheadAttention(d_model, heads, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_o.bias)
    return theirs.eval()


@pytest.mark.parametrize("schedule", [(8,), (1,) * 8, (3, 1, 2, 1, 1), (2, 5, 1)], ids=str)
def test_decoding_in_steps_matches_full_causal_multihead_attention(schedule):
    B, D, H = 2, 12, 3
    T, d_k = sum(schedule), D // H
    torch.manual_seed(len(schedule))
    ours = solution.CachedSelfAttention(D, H).double().eval()
    x = torch.randn(B, T, D, dtype=torch.float64)
    # nn.MultiheadAttention's boolean attn_mask means the opposite of ours: True = NOT allowed.
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    with torch.no_grad():
        want, _ = builtin_from(ours, D, H)(x, x, x, attn_mask=future, need_weights=False)
        outs, k, v, start = [], None, None, 0
        for size in schedule:
            out, k, v = ours(x[:, start:start + size], k, v)
            assert k.shape == v.shape == (B, H, start + size, d_k)
            outs.append(out)
            start += size
    torch.testing.assert_close(torch.cat(outs, dim=1), want, rtol=1e-12, atol=1e-12)
    # The caches are the key and value projections of every position, split into heads.
    for cache, W in ((k, ours.W_k), (v, ours.W_v)):
        torch.testing.assert_close(cache, W(x).view(B, T, H, d_k).transpose(1, 2), rtol=1e-12, atol=1e-12)


def test_the_caches_passed_in_are_left_alone():
    ours = solution.CachedSelfAttention(8, 2).double()
    k, v = torch.randn(1, 2, 3, 4, dtype=torch.float64), torch.randn(1, 2, 3, 4, dtype=torch.float64)
    k0, v0 = k.clone(), v.clone()
    _, k2, v2 = ours(torch.randn(1, 2, 8, dtype=torch.float64), k, v)
    assert torch.equal(k, k0) and torch.equal(v, v0) and torch.equal(k2[:, :, :3], k0) and torch.equal(v2[:, :, :3], v0)


def test_every_named_mistake_lies_outside_the_float32_softmax_convention():
    """LLaMA's float32 softmax is accepted at FLOAT32_INSIDE: no named mistake may hide inside that tolerance."""
    from checker.kit import FLOAT32_INSIDE, Kit, as_outputs, matches

    kit = Kit(spec, None, solution)
    (convention,) = spec.CONVENTIONS
    assert convention.tol == FLOAT32_INSIDE
    for mistake in spec.MISTAKES:
        outside = []
        for c in spec.CASES:
            want = as_outputs(kit.reference(kit.inputs(c), case=c), spec.OUTPUTS)
            got = as_outputs(kit.reference(kit.inputs(c), case=c, impl=mistake.impl), spec.OUTPUTS)
            outside.append(not all(matches(u, w, FLOAT32_INSIDE) for u, w in zip(got, want)))
        assert any(outside), f"{mistake.name} is within {FLOAT32_INSIDE} of the reference on every case"
