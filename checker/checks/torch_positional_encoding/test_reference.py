"""The reference PositionalEncoding equals the paper's formula, written as a per-element math.sin/math.cos loop."""

import math

import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_positional_encoding import checks as spec

solution = engine.load_solution(catalogue.find("positional_encoding"))


def loop_table(max_len: int, d_model: int) -> torch.Tensor:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(same angle), one element at a time."""
    table = torch.empty(1, max_len, d_model, dtype=torch.float64)
    for pos in range(max_len):
        for i in range(0, d_model, 2):
            angle = pos / 10000 ** (i / d_model)
            table[0, pos, i] = math.sin(angle)
            if i + 1 < d_model:
                table[0, pos, i + 1] = math.cos(angle)
    return table


@pytest.fixture
def float64_default():
    """The reference stores its table in the default dtype: make that float64 to compare without rounding."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


@pytest.mark.parametrize("max_len, d_model", [(48, 10), (40, 9), (300, 64), (7, 1), (5, 2), (1, 5)])
def test_table_is_the_formula(max_len, d_model, float64_default):
    pe = solution.PositionalEncoding(d_model, max_len=max_len).pe
    torch.testing.assert_close(pe, loop_table(max_len, d_model), rtol=0, atol=1e-12)


def test_table_is_stored_in_float32_by_default():
    pe = solution.PositionalEncoding(9, max_len=40).pe
    assert pe.dtype == torch.float32 and pe.shape == (1, 40, 9)
    # the float64 table rounded once to float32: within half a float32 ulp of values in [-1, 1]
    torch.testing.assert_close(pe.double(), loop_table(40, 9), rtol=0, atol=6e-8)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_forward_adds_the_first_T_rows(c):
    (x,) = spec.inputs(c, "float64")
    module = solution.PositionalEncoding(**spec.init(c)).double().eval()
    want = x + loop_table(c.T, c.D)
    torch.testing.assert_close(module(x), want, rtol=0, atol=1e-7)


def test_default_max_len_is_5000():
    assert solution.PositionalEncoding(4).pe.shape == (1, 5000, 4)


def test_seed_float32_tables_are_within_the_kata_tolerance():
    """TOLERANCES claims: every correct float32 construction passes for the positions the checks use."""
    rtol, atol = spec.TOLERANCES["float64"]
    for c in spec._TABLES:
        position = torch.arange(c.max_len, dtype=torch.float32).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, c.D, 2).float() * (-math.log(10000.0) / c.D))
        pe = torch.zeros(c.max_len, c.D)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term[: c.D // 2])
        error = (pe.double() - loop_table(c.max_len, c.D)[0]).abs().max().item()
        assert error < atol / 10, error
