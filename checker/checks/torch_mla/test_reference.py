"""The MLA reference against an independent computation: the keys and values rebuilt from the latent,
RoPE from the rope kata's reference (apply_rope, layout="half"), and F.scaled_dot_product_attention with
a causal boolean mask, in float64; plus decoding with the cache and the paper's absorbed inference form."""

import math

import pytest
import torch
import torch.nn.functional as F

from checker.catalogue import find
from checker.checks.torch_mla import checks as checks
from checker.engine import load_solution
from checker.kit import Kit

solution = load_solution(find("mla"))
apply_rope = load_solution(find("rope")).apply_rope
kit = Kit(checks, None, solution)


def independent(w, c, x, c_cache=None, k_rope_cache=None):
    B, T_new, _ = x.shape
    T_past = 0 if c_cache is None else c_cache.size(1)
    pos = torch.arange(T_past, T_past + T_new)
    q = (x @ w["W_q.weight"].T).view(B, T_new, c.H, c.d_nope + c.d_rope).transpose(1, 2)
    q = torch.cat([q[..., : c.d_nope], apply_rope(q[..., c.d_nope:], pos, "half")], dim=-1)
    c_kv = x @ w["W_dkv.weight"].T
    k_rope = apply_rope((x @ w["W_kr.weight"].T)[:, None], pos, "half")[:, 0]
    if c_cache is not None:
        c_kv, k_rope = torch.cat([c_cache, c_kv], 1), torch.cat([k_rope_cache, k_rope], 1)
    T = c_kv.size(1)
    k = torch.cat([(c_kv @ w["W_uk.weight"].T).view(B, T, c.H, c.d_nope).transpose(1, 2),
                   k_rope[:, None].expand(B, c.H, T, c.d_rope)], dim=-1)
    v = (c_kv @ w["W_uv.weight"].T).view(B, T, c.H, c.d_v).transpose(1, 2)
    mask = torch.ones(T_new, T, dtype=torch.bool).tril(T_past)
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # default scale 1/sqrt(q.size(-1)) = d_nope + d_rope
    return o.transpose(1, 2).reshape(B, T_new, -1) @ w["W_o.weight"].T, c_kv, k_rope


def _module(c):
    m = solution.MultiHeadLatentAttention(**checks.init(c)).double().eval()
    m.load_state_dict(kit.state(c, "float64"))
    return m


@pytest.mark.parametrize("c", checks.CASES + [checks.TIMING], ids=lambda c: c.label)
def test_equals_the_independent_computation(c):
    args = checks.inputs(c, "float64")
    with torch.no_grad():
        got = _module(c)(*args)
    for u, e in zip(got, independent(kit.state(c, "float64"), c, *args)):
        torch.testing.assert_close(u, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("c", checks.CASES, ids=lambda c: c.label)
def test_equals_the_explicit_computation_of_the_checks(c):
    args = checks.inputs(c, "float64")
    with torch.no_grad():
        got = _module(c)(*args)
    for u, e in zip(got, checks._explicit(kit.state(c, "float64"), c, *args)):
        torch.testing.assert_close(u, e, rtol=1e-10, atol=1e-12)


def test_decoding_with_the_cache_equals_the_full_forward_and_the_absorbed_form():
    c = checks._DECODE
    m = _module(c)
    x = torch.randn(c.B, c.T, c.D, generator=c.generator(), dtype=torch.float64)
    with torch.no_grad():
        full, c_all, k_all = m(x)
        cache, start, outs = (None, None), 0, []
        for size in c.schedule:
            out, *cache = m(x[:, start:start + size], *cache)
            outs.append(out)
            start += size
    torch.testing.assert_close(torch.cat(outs, 1), full, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(cache[0], c_all)
    torch.testing.assert_close(cache[1], k_all)
    # the cache per token: d_latent + d_rope numbers
    assert c_all.shape[-1] + k_all.shape[-1] == c.d_latent + c.d_rope
    # the paper's inference form: W_uk absorbed into the query, attention over the latents themselves
    W_uk = m.W_uk.weight.view(c.H, c.d_nope, c.d_latent)
    W_uv = m.W_uv.weight.view(c.H, c.d_v, c.d_latent)
    with torch.no_grad():
        q = m.W_q(x).view(c.B, c.T, c.H, -1).transpose(1, 2)
        q_rope = solution.rope(q[..., c.d_nope:], torch.arange(c.T), 10000.0)
        scores = (torch.einsum("bhtn,hnc,bsc->bhts", q[..., : c.d_nope], W_uk, c_all)
                  + torch.einsum("bhtr,bsr->bhts", q_rope, k_all)) / math.sqrt(c.d_nope + c.d_rope)
        scores = scores.masked_fill(~torch.ones(c.T, c.T, dtype=torch.bool).tril(), float("-inf"))
        o = torch.einsum("bhts,bsc,hvc->bthv", scores.softmax(-1), c_all, W_uv).reshape(c.B, c.T, -1)
        torch.testing.assert_close(m.W_o(o), full, rtol=1e-10, atol=1e-12)


def test_every_named_mistake_and_the_convention_differ_from_the_reference():
    for m in list(checks.MISTAKES) + list(checks.CONVENTIONS):
        differs = False
        for c in checks.CASES:
            args = checks.inputs(c, "float64")
            want = kit.reference(args, case=c)
            try:
                got = kit.reference(args, case=c, impl=m.impl)
            except RuntimeError:  # RoPE on an odd d_nope cannot run: that case says nothing
                continue
            differs = differs or not all(torch.allclose(u, e, rtol=1e-6, atol=1e-8) for u, e in zip(got, want))
        assert differs, m.name
