"""The reference FeedForward equals nn.Sequential(Linear, ReLU or GELU, Linear) with the same weights, in float64."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_feed_forward import checks as spec
from checker.kit import Kit

solution = engine.load_solution(catalogue.find("feed_forward"))
kit = Kit(spec, None, solution)


def builtin_from(ours: nn.Module, activation: str) -> nn.Sequential:
    act = {"relu": nn.ReLU(), "gelu": nn.GELU(approximate="none")}[activation]
    theirs = nn.Sequential(nn.Linear(ours.fc1.in_features, ours.fc1.out_features), act,
                           nn.Linear(ours.fc2.in_features, ours.fc2.out_features)).double()
    theirs[0].load_state_dict(ours.fc1.state_dict())
    theirs[2].load_state_dict(ours.fc2.state_dict())
    return theirs


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_matches_linear_act_linear(c):
    ours = solution.FeedForward(**spec.init(c)).double().eval()
    ours.load_state_dict(kit.state(c, "float64"))
    (x,) = spec.inputs(c, "float64")
    with torch.no_grad():
        torch.testing.assert_close(ours(x), builtin_from(ours, c.activation)(x), rtol=1e-12, atol=1e-12)


def test_gelu_is_the_exact_erf_form():
    """nn.GELU() and F.gelu default to 0.5 x (1 + erf(x / √2)); the tanh form differs by ~1e-4."""
    x = torch.linspace(-5, 5, 1001, dtype=torch.float64)
    exact = 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))
    torch.testing.assert_close(nn.GELU()(x), exact, rtol=1e-14, atol=1e-15)
    torch.testing.assert_close(F.gelu(x), exact, rtol=1e-14, atol=1e-15)
    assert (F.gelu(x, approximate="tanh") - exact).abs().max() > 1e-4


@pytest.mark.parametrize("activation", ["swish", "ReLU", "", "tanh"])
def test_unknown_activation_raises_value_error(activation):
    with pytest.raises(ValueError):
        solution.FeedForward(6, 16, activation=activation)


def test_dropout_p1_leaves_fc2_bias():
    ours = solution.FeedForward(6, 16, dropout=1.0).double().train()
    x = torch.randn(2, 5, 6, dtype=torch.float64)
    torch.testing.assert_close(ours(x), ours.fc2.bias.detach().expand(2, 5, 6))
