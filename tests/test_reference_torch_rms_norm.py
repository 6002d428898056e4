"""The reference RMSNorm equals torch.nn.RMSNorm(D, eps=eps) with the weight copied, in float64 and float16."""

import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks import torch_rms_norm as spec
from checker.kit import Kit

solution = engine.load_solution(catalogue.find("rms_norm"))
kit = Kit(spec, None, solution)


def builtin_from(ours: nn.Module, d_model: int, dtype) -> nn.RMSNorm:
    theirs = nn.RMSNorm(d_model, eps=ours.eps, dtype=dtype)
    with torch.no_grad():
        theirs.weight.copy_(ours.weight)
    return theirs


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_matches_nn_rms_norm(c):
    ours = solution.RMSNorm(**spec.init(c)).double()
    ours.load_state_dict(kit.state(c, "float64"))  # weight away from ones
    (x,) = spec.inputs(c, "float64")
    with torch.no_grad():
        torch.testing.assert_close(ours(x), builtin_from(ours, c.D, torch.float64)(x), rtol=1e-9, atol=1e-10)


def test_reference_matches_nn_rms_norm_in_float16_without_overflow():
    c = spec._HALF
    ours = solution.RMSNorm(**spec.init(c)).half()
    ours.load_state_dict(kit.state(c, "float64"))
    (x,) = spec.inputs(c, "float16")
    assert (x.float() ** 2).max() > torch.finfo(torch.float16).max  # the premise: x² overflows float16
    with torch.no_grad():
        got, theirs = ours(x), builtin_from(ours, c.D, torch.float16)(x)
    assert got.dtype == torch.float16 and torch.isfinite(got).all()
    torch.testing.assert_close(got, theirs, rtol=spec._HALF_TOL[0], atol=spec._HALF_TOL[1])


def test_formula_written_out():
    """y = x / sqrt(mean(x²) + eps) * weight, with no mean subtracted."""
    c = spec.CASES[1]
    ours = solution.RMSNorm(**spec.init(c)).double()
    ours.load_state_dict(kit.state(c, "float64"))
    (x,) = spec.inputs(c, "float64")
    want = x / torch.sqrt((x * x).sum(-1, keepdim=True) / c.D + c.eps) * ours.weight
    with torch.no_grad():
        torch.testing.assert_close(ours(x), want, rtol=1e-12, atol=1e-12)


def test_defaults():
    ours = solution.RMSNorm(7)
    assert ours.eps == 1e-6  # LLaMA's; nn.RMSNorm's default eps=None means torch.finfo(dtype).eps
    assert torch.equal(ours.weight, nn.RMSNorm(7).weight)
    assert [n for n, _ in ours.named_parameters()] == ["weight"]
