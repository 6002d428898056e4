"""The reference dropout against torch.nn.functional.dropout: equal where both are deterministic
(evaluation, p = 0, p = 1), and alike in training (the same support {0, x / (1 - p)}, the same share
of zeros within the checks' tolerance), since the two draw their masks differently."""

import math

import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine
from checker.checks.torch_dropout import checks as spec

solution = engine.load_solution(catalogue.find("dropout"))


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_deterministic_cases_equal_f_dropout(c):
    x, p, training, _ = spec.inputs(c, "float64")
    torch.testing.assert_close(solution.dropout(x, p, training), F.dropout(x, p, training), rtol=0, atol=0)


@pytest.mark.parametrize("c", spec._TRAIN, ids=lambda c: c.label)
def test_training_is_alike_f_dropout(c):
    x = spec._x(c)
    ours = solution.dropout(x, c.p, True, torch.Generator().manual_seed(c.seed))
    torch.manual_seed(c.seed)
    theirs = F.dropout(x, c.p, True)
    n = x.numel()
    for y in (ours, theirs):
        prof = spec._profile(x, y, c.p)
        assert prof["off_scale"] == 0 and not prof["shared"]
        assert abs(prof["zero_share"] - c.p) <= spec._SIGMAS * spec._share_sigma(c.p, n)
        assert abs(prof["mean_ratio"] - 1) <= spec._SIGMAS * spec._mean_sigma(c.p, n)


def test_the_generator_decides_the_mask():
    x = spec._x(spec._TRAIN[0])
    a, b, other = (solution.dropout(x, 0.3, True, torch.Generator().manual_seed(s)) for s in (5, 5, 6))
    assert torch.equal(a, b) and not torch.equal(a, other)


def test_gradient_is_the_scaled_mask_as_in_f_dropout():
    c = spec._TRAIN[1]
    x = spec._x(c).requires_grad_(True)
    y = solution.dropout(x, c.p, True, torch.Generator().manual_seed(1))
    y.sum().backward()
    torch.testing.assert_close(x.grad, (y / x).detach(), rtol=1e-12, atol=0)


def test_p_outside_the_unit_interval_raises_as_f_dropout_does():
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError):
            F.dropout(torch.ones(3), p, True)
        with pytest.raises(ValueError):
            solution.dropout(torch.ones(3), p, True)


@pytest.mark.parametrize("mistake", spec._TRAIN_MISTAKES, ids=lambda m: m.name)
def test_every_training_mistake_is_told_apart_from_the_reference(mistake):
    """The statistics separate each mistake from a correct dropout by far more than the tolerance."""
    c = spec._TRAIN[0]
    x = spec._x(c)
    n = x.numel()
    prof = spec._profile(x, mistake.impl(x, c.p, True, torch.Generator().manual_seed(c.seed)), c.p)
    wrong = (prof["off_scale"] > 0 or prof["shared"] or abs(prof["zero_share"] - c.p) > spec._SIGMAS
             * spec._share_sigma(c.p, n) or abs(prof["mean_ratio"] - 1) > spec._SIGMAS * spec._mean_sigma(c.p, n))
    assert wrong


def test_tolerances_are_six_standard_errors():
    assert spec._SIGMAS == 6.0
    assert math.isclose(spec._share_sigma(0.3, 24000), math.sqrt(0.21 / 24000))
