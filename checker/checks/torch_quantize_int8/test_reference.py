"""The reference equals bitsandbytes' vector-wise quantisation (bitsandbytes/functional.py of the 0.3x releases:
vectorwise_quant, vectorwise_dequant and vectorwise_mm_dequant with quant_type="vector"), re-typed here, and the
LLM.int8() formula (Dettmers et al. 2022, eq. 6-7) evaluated element by element in plain Python."""

import numpy as np
import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_quantize_int8 import checks as spec

solution = engine.load_solution(catalogue.find("quantize_int8"))
C = 127.0


def bnb_vectorwise_quant(x, dim=1):
    max1 = torch.amax(torch.abs(x), dim=dim, keepdim=True)
    xq = torch.round(x * (C / max1)).to(torch.int8)
    return xq, max1


def bnb_vectorwise_dequant(xq, max1):
    return xq / C * max1


def bnb_vectorwise_mm_dequant(xq, S1, S2):
    x = xq.to(S1.dtype)
    x = x * (S1 / C)
    x = x * (S2 / C)
    return x


@pytest.mark.parametrize("c", [*spec.CASES, spec.TIMING], ids=lambda c: c.label)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_quantize_matches_bitsandbytes(c, dtype):
    (W,) = spec.inputs(c, dtype)
    q, scale = solution.quantize_int8(W)
    xq, max1 = bnb_vectorwise_quant(W)
    assert q.dtype == torch.int8
    if dtype == "float64" or c in spec.CASES:
        assert torch.equal(q, xq)
    else:  # W / (absmax / 127) and W · (127 / absmax) differ by an ulp in float32: a rare near-tie rounds the other way
        diff = (q.to(torch.int32) - xq.to(torch.int32)).abs()
        assert diff.max() <= 1 and diff.sum() <= 1e-4 * diff.numel()
    torch.testing.assert_close(scale, max1 / C, rtol=1e-6 if dtype == "float32" else 1e-15, atol=0)
    torch.testing.assert_close(solution.dequantize_int8(q, scale), bnb_vectorwise_dequant(q, max1))


@pytest.mark.parametrize("c", spec._MATMUL_CASES, ids=lambda c: c.label)
def test_matmul_matches_bitsandbytes(c):
    qx, sx, qw, sw = spec._matmul_inputs(c, "float64")
    acc = torch.matmul(qx.to(torch.int32), qw.to(torch.int32).t())  # bnb's igemm: int32 out
    want = bnb_vectorwise_mm_dequant(acc, sx * C, (sw * C).t())
    torch.testing.assert_close(solution.int8_matmul(qx, sx, qw, sw), want, rtol=1e-13, atol=0)


def test_formula_element_by_element():
    """q = round-half-even(W · 127 / absmax) with NumPy's rint; out = Σ qx·qw · sx · sw in Python integers."""
    (W,) = spec.inputs(spec.CASES[1], "float64")
    q, scale = solution.quantize_int8(W)
    for n, row in enumerate(W.tolist()):
        m = max(abs(v) for v in row)
        assert scale[n, 0].item() == m / 127
        assert q[n].tolist() == [int(np.rint(v / (m / 127))) for v in row]
    qx, sx, qw, sw = spec._matmul_inputs(spec._MATMUL_CASES[1], "float64")
    out = solution.int8_matmul(qx, sx, qw, sw)
    for t, xrow in enumerate(qx.tolist()):
        for n, wrow in enumerate(qw.tolist()):
            exact = sum(a * b for a, b in zip(xrow, wrow))
            assert abs(out[t, n].item() - exact * sx[t, 0].item() * sw[n, 0].item()) <= 1e-12 * abs(exact) + 1e-15


def test_ties_round_to_even_and_zero_rows_give_scale_one():
    W = torch.tensor([[127.0, 0.5, 1.5, 2.5, -2.5], [0.0, 0.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    q, scale = solution.quantize_int8(W)
    assert q.tolist() == [[127, 0, 2, 2, -2], [0, 0, 0, 0, 0]]
    assert scale.tolist() == [[1.0], [1.0]]
