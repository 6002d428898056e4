"""The flash attention reference equals F.scaled_dot_product_attention; the memory probe sees what it must.

The probe (checker/checks/child/memory_probe.py) is exercised directly with small stand-in user
modules: every way of making a (T_q, T_k) tensor is caught (matmul, einsum, exp, max, where,
indexing, broadcasting, a buffer filled with out=, under torch.no_grad or inference_mode), while
views and the reference stay under the bound. A last test runs it in the sandbox next to the
forbidden-call traps.
"""

import math
import types

import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine
from checker.checks.child.memory_probe import flash_attention_memory
from checker.sandbox.parent import Sandbox

REFERENCE = engine.load_solution(catalogue.find("flash_attention"))
VARIANTS = __import__("pathlib").Path(__file__).parent / "variants"


def _qkv(B, H, T_q, T_k, d_k, d_v, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(B, H, T_q, d_k, generator=g, dtype=dtype),
            torch.randn(B, H, T_k, d_k, generator=g, dtype=dtype),
            torch.randn(B, H, T_k, d_v, generator=g, dtype=dtype))


@pytest.mark.parametrize("T_q, T_k, causal, block", [
    (11, 13, False, 4), (9, 14, True, 5), (10, 6, True, 4), (5, 7, False, 16), (1, 9, True, 2), (8, 8, True, 3),
    (7, 30, True, 1),
])
def test_reference_equals_scaled_dot_product_attention(T_q, T_k, causal, block):
    q, k, v = _qkv(2, 3, T_q, T_k, 4, 5)
    # bottom-right causal: query i sees j <= i + (T_k - T_q); SDPA's bool mask has True = may attend, like ours
    mask = torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q) if causal else None
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    got = REFERENCE.flash_attention(q, k, v, causal, block)
    if causal and T_q > T_k:  # SDPA gives fully masked queries zero output too (verified here)
        assert torch.equal(want[..., : T_q - T_k, :], torch.zeros_like(want[..., : T_q - T_k, :]))
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_reference_gradients_equal_sdpa_gradients():
    q, k, v = (t.requires_grad_() for t in _qkv(2, 3, 9, 14, 4, 5))
    mask = torch.ones(9, 14, dtype=torch.bool).tril(5)
    cot = torch.randn(2, 3, 9, 5, dtype=torch.float64)
    want = torch.autograd.grad((F.scaled_dot_product_attention(q, k, v, attn_mask=mask) * cot).sum(), (q, k, v))
    got = torch.autograd.grad((REFERENCE.flash_attention(q, k, v, True, 4) * cot).sum(), (q, k, v))
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- the memory probe

B, H, T_q, T_k, d_k, d_v, BLOCK = 1, 2, 37, 45, 6, 5, 8
BOUND = B * H * max(T_q, T_k) * max(BLOCK, d_k, d_v)  # 720; one head's (T_q, T_k) is 1665


def _probe(fn, dtype=torch.float64):
    q, k, v = _qkv(B, H, T_q, T_k, d_k, d_v, dtype)
    return flash_attention_memory(types.SimpleNamespace(flash_attention=fn), q, k, v, True, BLOCK)


def _naive(q, k, v):
    return (q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))).softmax(-1) @ v


def _fill_out(q, k, v):
    s = q.new_empty(0)
    torch.matmul(q, k.transpose(-2, -1), out=s)  # resized inside the op: a buffer filled in place
    return s.softmax(-1) @ v


def _per_head(q, k):
    scores = [q[0, h] @ k[0, h].T for h in range(H)]  # (T_q, T_k) each
    return torch.stack(scores)[None, ..., :d_v]


QUADRATIC = {
    "matmul": lambda q, k, v, c, b: _naive(q, k, v),
    "matmul under no_grad": lambda q, k, v, c, b: torch.no_grad()(_naive)(q, k, v),
    "matmul under inference_mode": lambda q, k, v, c, b: torch.inference_mode()(_naive)(q, k, v).clone(),
    "einsum": lambda q, k, v, c, b: torch.einsum("bhqd,bhkd->bhqk", q, k).softmax(-1) @ v,
    "broadcast product": lambda q, k, v, c, b: (q[..., :, None, :] * k[..., None, :, :]).sum(-1).softmax(-1) @ v,
    "one head's (T_q, T_k)": lambda q, k, v, c, b: _per_head(q, k),
    "exp of an expanded view": lambda q, k, v, c, b: torch.exp(q[..., :1].expand(B, H, T_q, T_k))[..., :d_v],
    "comparison and where": lambda q, k, v, c, b: torch.where(q[..., :1] > k[..., :1].mT, 1.0, 0.0)[..., :d_v],
    "amax over a broadcast": lambda q, k, v, c, b: torch.maximum(q[..., :1], k[..., :1].transpose(-2, -1))[..., :d_v],
    "indexing": lambda q, k, v, c, b: k[:, :, torch.arange(T_k).repeat(T_q)][..., :T_q, :d_v],
    "in-place into a new buffer": lambda q, k, v, c, b: q.new_zeros(B, H, T_q, T_k).add_(1.0)[..., :d_v],
    "out= buffer": lambda q, k, v, c, b: _fill_out(q, k, v),
    "torch.tensor from a list": lambda q, k, v, c, b: torch.tensor([[0.0] * T_k] * T_q * 2)[:T_q, :d_v].expand(
        B, H, T_q, d_v),
    "a (T_q, T_k) causal mask": lambda q, k, v, c, b: torch.ones(T_q, T_k, dtype=torch.bool).tril()[:, :d_v] * 1.0,
}


@pytest.mark.parametrize("name", QUADRATIC)
def test_probe_catches_every_quadratic_tensor(name):
    reply = _probe(QUADRATIC[name])
    assert reply["largest"] >= T_q * T_k > BOUND, (name, reply["largest"], reply["op"], reply["shape"])


def test_probe_passes_the_reference_and_ignores_views():
    reply = _probe(REFERENCE.flash_attention)
    assert 0 < reply["largest"] <= BOUND, reply
    assert reply["fused"] == []

    def with_views(q, k, v, causal, block_size):
        rows = torch.arange(T_q)[:, None]
        big_view = rows.expand(T_q, T_k)  # a view: no (T_q, T_k) memory
        assert big_view.shape == (T_q, T_k)
        kt = k.transpose(-2, -1)[..., :1].expand(B, H, d_k, 3)  # views of the inputs
        return REFERENCE.flash_attention(q, k, v, causal, block_size) + 0 * kt.sum()

    reply = _probe(with_views)
    assert reply["largest"] <= BOUND, reply


def test_probe_names_a_fused_kernel():
    q, k, v = _qkv(B, H, T_q, T_k, 8, 8, torch.float32)
    fused = types.SimpleNamespace(flash_attention=lambda q, k, v, c, b: F.scaled_dot_product_attention(q, k, v))
    reply = flash_attention_memory(fused, q, k, v, False, BLOCK)
    assert any("scaled_dot_product" in name for name in reply["fused"]), reply["fused"]


def test_probe_and_traps_together_in_the_sandbox():
    """The forbidden-call trap records a call made while the probe runs, and the probe still measures."""
    kata = catalogue.find("flash_attention")
    q, k, v = _qkv(B, H, T_q, T_k, d_k, d_v)
    with Sandbox(VARIANTS / "wrong_hidden_builtin.py", timeout=20) as sandbox:
        sandbox.request("trap", names=list(kata.forbidden))
        sandbox.request("load")
        reply = sandbox.request("drive", driver="checker.checks.child.memory_probe:flash_attention_memory",
                                args=(q, k, v, True, BLOCK))["value"]
        trapped = [entry[1:] for entry in sandbox.request("report")["value"] if entry[0] == "trapped"]
    assert reply["largest"] > BOUND
    assert [name for _, name in trapped] == ["torch.nn.functional.scaled_dot_product_attention"]
