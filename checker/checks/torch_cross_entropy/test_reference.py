"""The reference cross_entropy equals F.cross_entropy on the flattened (N, C) logits, in float64."""

import math

import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine
from checker.checks.torch_cross_entropy import checks as spec

solution = engine.load_solution(catalogue.find("cross_entropy"))


def builtin(logits, target, ignore_index, eps):
    C = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, C), target.reshape(-1), ignore_index=ignore_index, label_smoothing=eps)


@pytest.mark.parametrize("c", [*spec.CASES, spec.TIMING], ids=lambda c: c.label)
@pytest.mark.parametrize("eps", [None, 0.0, 0.1, 1.0])
def test_reference_matches_f_cross_entropy(c, eps):
    logits, target, ignore_index, case_eps = spec.inputs(c, "float64")
    eps = case_eps if eps is None else eps
    got = solution.cross_entropy(logits, target, ignore_index, eps)
    assert got.shape == () and got.dtype == torch.float64
    torch.testing.assert_close(got, builtin(logits, target, ignore_index, eps), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("scale", [1e4, -1e4])
def test_large_logits_match_and_stay_finite(scale):
    c = spec.CASES[3]
    _, target, ignore_index, eps = spec.inputs(c, "float64")
    logits = spec._logits(c, "float64", scale=abs(scale)) * math.copysign(1, scale)
    got = solution.cross_entropy(logits, target, ignore_index, eps)
    assert torch.isfinite(got)
    torch.testing.assert_close(got, builtin(logits, target, ignore_index, eps), rtol=1e-9, atol=1e-6)


def test_every_position_ignored_is_nan_like_f_cross_entropy():
    """The premise of the all-ignored check, verified by running PyTorch (torch 2.x: 0 / 0 = NaN)."""
    logits, target, ignore_index, eps = spec.inputs(spec.CASES[2], "float64")
    target = torch.full_like(target, ignore_index)
    for e in (0.0, eps):
        assert torch.isnan(builtin(logits, target, ignore_index, e))
        assert torch.isnan(solution.cross_entropy(logits, target, ignore_index, e))


def test_label_smoothing_is_eps_over_c_on_every_class():
    """PyTorch's smoothed target: (1 - ε)·one_hot + ε/C on all C classes (not ε/(C-1) on the others)."""
    g = torch.Generator().manual_seed(3)
    logits, target, eps, C = torch.randn(6, 4, generator=g, dtype=torch.float64), torch.tensor([0, 1, 2, 3, 1, 0]), 0.3, 4
    q = (1 - eps) * F.one_hot(target, C).double() + eps / C
    want = -(q * logits.log_softmax(-1)).sum(-1).mean()
    torch.testing.assert_close(F.cross_entropy(logits, target, label_smoothing=eps), want)
    torch.testing.assert_close(solution.cross_entropy(logits, target, label_smoothing=eps), want)


def test_gradient_matches_f_cross_entropy():
    logits, target, ignore_index, eps = spec.inputs(spec.CASES[0], "float64")
    ours, theirs = logits.clone().requires_grad_(), logits.clone().requires_grad_()
    solution.cross_entropy(ours, target, ignore_index, 0.25).backward()
    builtin(theirs, target, ignore_index, 0.25).backward()
    torch.testing.assert_close(ours.grad, theirs.grad, rtol=1e-9, atol=1e-12)
    assert (ours.grad[target == ignore_index] == 0).all()
