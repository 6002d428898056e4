"""The reference GroupedQueryAttention agrees with F.scaled_dot_product_attention(enable_gqa=True), in float64."""

import math

import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine
from checker.checks.torch_grouped_query_attention import checks as spec

solution = engine.load_solution(catalogue.find("grouped_query_attention"))


def _heads(x, w, b, heads):
    B, T, _ = x.shape
    return (x @ w.T + b).view(B, T, heads, -1).transpose(1, 2)  # (B, heads, T, d_k)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_matches_sdpa_with_enable_gqa(c):
    torch.manual_seed(c.id)
    ours = solution.GroupedQueryAttention(c.D, c.H, c.H_kv).double().eval()
    x, mask = spec.inputs(c, "float64")
    with torch.no_grad():
        out, attn = ours(x, mask)
        q = _heads(x, ours.W_q.weight, ours.W_q.bias, c.H)
        k = _heads(x, ours.W_k.weight, ours.W_k.bias, c.H_kv)
        v = _heads(x, ours.W_v.weight, ours.W_v.bias, c.H_kv)
        # SDPA's boolean attn_mask means what ours means: True = may attend (checked below).
        heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)  # (B, H, T, d_k)
        want = heads.transpose(1, 2).reshape(c.B, c.T, c.D) @ ours.W_o.weight.T + ours.W_o.bias
    torch.testing.assert_close(out, want, rtol=1e-12, atol=1e-12)
    # The weights of query head h, written out with kv head h // G (no repeat at all).
    for h in range(c.H):
        scores = q[:, h] @ k[:, h // c.G].transpose(-2, -1) / math.sqrt(c.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask.expand(c.B, c.H, c.T, c.T)[:, h], float("-inf"))
        torch.testing.assert_close(attn[:, h], scores.softmax(-1), rtol=1e-12, atol=1e-12)


def test_enable_gqa_groups_like_repeat_interleave():
    """What the contract's grouping is, checked on the built-in by running: head h reads kv head h // G."""
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 6, 5, 4, generator=g, dtype=torch.float64)
    k, v = (torch.randn(2, 2, 5, 4, generator=g, dtype=torch.float64) for _ in range(2))
    gqa = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    interleaved = F.scaled_dot_product_attention(q, k.repeat_interleave(3, 1), v.repeat_interleave(3, 1))
    tiled = F.scaled_dot_product_attention(q, k.repeat(1, 3, 1, 1), v.repeat(1, 3, 1, 1))
    torch.testing.assert_close(gqa, interleaved, rtol=0, atol=0)
    assert not torch.allclose(gqa, tiled)


def test_sdpa_bool_mask_means_may_attend():
    q = torch.randn(1, 1, 3, 4, dtype=torch.float64)
    causal = torch.ones(3, 3, dtype=torch.bool).tril()
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=causal)
    torch.testing.assert_close(out[0, 0, 0], q[0, 0, 0])  # query 0 sees only key 0


def test_non_dividing_sizes_raise_value_error():
    for d_model, heads, kv_heads in ((12, 6, 4), (10, 4, 2)):
        with pytest.raises(ValueError):
            solution.GroupedQueryAttention(d_model, heads, kv_heads)


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
