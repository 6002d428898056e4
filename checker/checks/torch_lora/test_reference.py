"""The reference LoRALinear against the formula written out with F.linear on W + (alpha / r) B A, and
against PEFT's initialisation (kaiming_uniform_ with a = √5 is nn.Linear's own weight init)."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_lora import checks as spec
from checker.checks.torch_lora.driver import lora_merge
from checker.kit import Kit, matches

solution = engine.load_solution(catalogue.find("lora"))
kit = Kit(spec, None, solution)


def _loaded(c):
    layer = solution.LoRALinear(**spec.init(c)).double()
    layer.load_state_dict(kit.state(c, "float64"))
    return layer.eval()


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_equals_a_linear_layer_with_the_merged_weight(c):
    layer = _loaded(c)
    (x,) = spec.inputs(c, "float64")
    W = layer.base.weight + c.alpha / c.r * layer.lora_B @ layer.lora_A
    with torch.no_grad():
        torch.testing.assert_close(layer(x), F.linear(x, W, layer.base.bias), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_merge_round_trip(c):
    (x,) = spec.inputs(c, "float64")
    got = lora_merge(solution, spec.init(c), kit.state(c, "float64"), x)
    torch.testing.assert_close(got["merged"], got["before"], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got["unmerged"], got["before"], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got["W_after"], kit.state(c, "float64")["base.weight"], rtol=1e-12, atol=1e-12)


def test_fresh_wrapper_is_the_base_and_only_lora_trains():
    base = nn.Linear(7, 6)
    layer = solution.LoRALinear(base, r=3, alpha=12.0)
    x = torch.randn(4, 7)
    assert torch.equal(layer(x), base(x))
    assert [n for n, p in layer.named_parameters() if p.requires_grad] == ["lora_A", "lora_B"]
    assert layer.scaling == 4.0


def test_lora_a_follows_nn_linear_default_init():
    """PEFT's kaiming_uniform_(a=√5) is nn.Linear.reset_parameters's: the same draws from the same seed."""
    torch.manual_seed(0)
    layer = solution.LoRALinear(nn.Linear(64, 48), r=32, alpha=16.0)
    torch.manual_seed(0)
    nn.Linear(64, 48)  # consume the base's draws
    like = nn.Linear(64, 32, bias=False)  # weight (r, D_in) with nn.Linear's init
    torch.testing.assert_close(layer.lora_A, like.weight)
    assert float(layer.lora_A.detach().abs().max()) <= 1 / math.sqrt(64)


@pytest.mark.parametrize("mistake", spec.MISTAKES, ids=lambda m: m.name)
def test_every_forward_mistake_differs_from_the_reference_on_every_case(mistake):
    for c in spec.CASES:
        (x,) = spec.inputs(c, "float64")
        assert not matches(kit.reference((x,), case=c, impl=mistake.impl), kit.reference((x,), case=c))


@pytest.mark.parametrize("mistake", spec._MERGE_MISTAKES, ids=lambda m: m.name)
def test_every_merge_mistake_is_caught_on_the_square_case(mistake):
    c = spec._SQUARE
    (x,) = spec.inputs(c, "float64")
    got = lora_merge(spec._namespace(mistake.impl), spec.init(c), kit.state(c, "float64"), x)
    assert not matches(got["merged"], got["before"])
