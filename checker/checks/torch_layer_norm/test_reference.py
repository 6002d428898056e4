"""The reference LayerNorm equals torch.nn.LayerNorm with weight = gamma and bias = beta, in float64."""

import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_layer_norm import checks as spec
from checker.kit import Kit

solution = engine.load_solution(catalogue.find("layer_norm"))
kit = Kit(spec, None, solution)


def builtin_from(ours: nn.Module, d_model: int) -> nn.LayerNorm:
    theirs = nn.LayerNorm(d_model, eps=ours.eps, dtype=torch.float64)
    with torch.no_grad():
        theirs.weight.copy_(ours.gamma)
        theirs.bias.copy_(ours.beta)
    return theirs


@pytest.mark.parametrize("c", [*spec.CASES, spec._LARGE_MEAN], ids=lambda c: c.label)
def test_reference_matches_nn_layer_norm(c):
    ours = solution.LayerNorm(**spec.init(c)).double()
    ours.load_state_dict(kit.state(c, "float64"))  # gamma and beta away from ones and zeros
    (x,) = spec.inputs(c, "float64")
    with torch.no_grad():
        torch.testing.assert_close(ours(x), builtin_from(ours, c.D)(x), rtol=1e-9, atol=1e-10)


def test_defaults_match_nn_layer_norm():
    ours, theirs = solution.LayerNorm(7), nn.LayerNorm(7)
    assert ours.eps == theirs.eps == 1e-5
    assert torch.equal(ours.gamma, theirs.weight) and torch.equal(ours.beta, theirs.bias)


def test_constant_vector_gives_beta():
    c = spec.CASES[2]
    ours = solution.LayerNorm(**spec.init(c)).double()
    ours.load_state_dict(kit.state(c, "float64"))
    (x,) = spec.inputs(c, "float64")
    with torch.no_grad():
        assert torch.equal(ours(x)[spec._CONSTANT_AT], ours.beta)


def test_torch_var_is_unbiased_by_default():
    """The premise of the 'unbiased variance' mistake, checked by running."""
    x = torch.randn(3, 5, dtype=torch.float64)
    centered = x - x.mean(-1, keepdim=True)
    torch.testing.assert_close(x.var(-1), (centered**2).sum(-1) / 4)
    torch.testing.assert_close(x.std(-1), ((centered**2).sum(-1) / 4).sqrt())
    torch.testing.assert_close(x.var(-1, unbiased=False), (centered**2).mean(-1))
