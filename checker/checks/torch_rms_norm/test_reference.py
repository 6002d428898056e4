"""The reference RMSNorm equals torch.nn.RMSNorm(D, eps=eps) with the weight copied, in float64 and float16."""

import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_rms_norm import checks as spec
from checker.kit import FLOAT32_INSIDE, Kit, matches

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


def _outputs(impl, convention=None):
    """impl's float64 output on every case, with the case's weights (as the checks run a mistake)."""
    k = Kit(spec, None, solution)
    k.convention = convention
    return [k.reference(spec.inputs(c, "float64"), case=c, impl=impl) for c in spec.CASES]


@pytest.mark.parametrize("mistake", spec.MISTAKES, ids=lambda m: m.name)
def test_every_mistake_stays_outside_the_float32_tolerance_on_some_case(mistake):
    """Accepting float32 internals opens no door: each named mistake, computed in float64 or with float32
    internals, is further than FLOAT32_INSIDE from the reference and from HF's version on some case."""
    (hf,) = spec.CONVENTIONS
    assert hf.tol == FLOAT32_INSIDE
    references = {"reference": _outputs(None), "HF float32 internals": _outputs(hf.impl)}
    as_written = [_outputs(mistake.impl)]
    if mistake.name not in ("float32, never cast back",):
        as_written.append(_outputs(_float32_inside(mistake)))
    for name, want in references.items():
        for got in as_written:
            assert not all(matches(g, w, FLOAT32_INSIDE) for g, w in zip(got, want)), (
                f"{mistake.name} is within float32's tolerance of the {name} on every case")


def _float32_inside(mistake):
    """The mistake's forward run on x.to(torch.float32), cast back to x's dtype: HF's way of writing it."""
    base = mistake.impl

    class Float32Inside(base):
        def forward(self, x):
            return super().forward(x.to(torch.float32)).to(x.dtype)

    return Float32Inside


def test_hf_llama_rms_norm_is_the_accepted_convention_and_within_its_tolerance():
    """The convention is HF's code, and it is right to float32's precision, not float64's."""
    (hf,) = spec.CONVENTIONS
    ours, theirs = _outputs(None), _outputs(hf.impl)
    assert all(matches(t, o, FLOAT32_INSIDE) for t, o in zip(theirs, ours))
    assert not all(matches(t, o) for t, o in zip(theirs, ours))  # so float64 alone would reject it
