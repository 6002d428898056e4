"""The reference SwiGLU against formulas written here: F.glu (a · sigmoid(b)) and LLaMA's w2(silu(w1 x) * w3 x)."""

import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine
from checker.checks.torch_swiglu import checks as spec
from checker.kit import Kit

solution = engine.load_solution(catalogue.find("swiglu"))
kit = Kit(spec, None, solution)


def loaded(c):
    ours = solution.SwiGLU(**spec.init(c)).double()
    ours.load_state_dict(kit.state(c, "float64"))  # every weight and bias away from its initial value
    return ours


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_matches_glu_builtin(c):
    """silu(g) · u = (g · u) · sigmoid(g) = F.glu([g · u, g]): PyTorch's GLU with the halves chosen so."""
    ours, (x,) = loaded(c), spec.inputs(c, "float64")
    sd = ours.state_dict()
    g = x @ sd["W_gate.weight"].T + (sd["W_gate.bias"] if c.bias else 0)
    u = x @ sd["W_up.weight"].T + (sd["W_up.bias"] if c.bias else 0)
    hidden = F.glu(torch.cat([g * u, g], dim=-1), dim=-1)
    want = hidden @ sd["W_down.weight"].T + (sd["W_down.bias"] if c.bias else 0)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), want, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_matches_llama_feed_forward(c):
    """Meta's LLaMA FeedForward: w2(F.silu(w1(x)) * w3(x)), with w1 = W_gate, w2 = W_down, w3 = W_up."""
    ours, (x,) = loaded(c), spec.inputs(c, "float64")
    w1, w2, w3 = ours.W_gate, ours.W_down, ours.W_up
    with torch.no_grad():
        want = w2(w1(x) * torch.sigmoid(w1(x)) * w3(x))
        torch.testing.assert_close(ours(x), want, rtol=1e-9, atol=1e-10)


def test_bias_false_means_no_bias_parameters():
    names = [n for n, _ in solution.SwiGLU(6, 16).named_parameters()]
    assert names == ["W_gate.weight", "W_up.weight", "W_down.weight"]
    assert len(list(solution.SwiGLU(6, 16, bias=True).parameters())) == 6


def test_llama_hidden_size():
    """LLaMA-7B: d_ff = 256 · ceil(int(2/3 · 4 · 4096) / 256) = 11008 (the rounding the statement describes)."""
    D, multiple_of = 4096, 256
    hidden = int(2 * (4 * D) / 3)
    assert multiple_of * ((hidden + multiple_of - 1) // multiple_of) == 11008
