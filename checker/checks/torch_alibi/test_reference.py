"""The ALiBi reference against the authors' get_slopes, a bias written element by element, and
F.scaled_dot_product_attention given the bias as a float mask, in float64."""

import math

import pytest
import torch
import torch.nn.functional as F

from checker.catalogue import find
from checker.checks.torch_alibi import checks as checks
from checker.engine import load_solution

solution = load_solution(find("alibi"))


def get_slopes(n):
    """ofirpress/attention_with_linear_biases, as published."""
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]


@pytest.mark.parametrize("H", list(range(1, 33)) + [40, 48, 64, 96])
def test_slopes_equal_the_authors_get_slopes(H):
    got = solution.alibi_slopes(H)
    assert got.dtype == torch.float64 and got.shape == (H,)
    torch.testing.assert_close(got, torch.tensor(get_slopes(H), dtype=torch.float64), rtol=1e-12, atol=0)


def test_twelve_heads_as_the_contract_spells_it_out():
    expected = [2.0 ** -e for e in (1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5)]
    torch.testing.assert_close(solution.alibi_slopes(12), torch.tensor(expected, dtype=torch.float64))


@pytest.mark.parametrize("H, T_q, T_k", [(4, 5, 5), (6, 3, 8), (3, 1, 6), (12, 4, 7)])
def test_bias_element_by_element(H, T_q, T_k):
    m = get_slopes(H)
    expected = torch.tensor([[[-m[h] * (i + T_k - T_q - j) for j in range(T_k)] for i in range(T_q)] for h in range(H)],
                            dtype=torch.float64)
    torch.testing.assert_close(solution.alibi_bias(H, T_q, T_k), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("c", checks.CASES, ids=lambda c: c.label)
def test_attention_equals_the_builtin_with_bias_and_causal_float_mask(c):
    q, k, v = checks.inputs(c, "float64")
    bias = solution.alibi_bias(c.H, c.T_q, c.T_k)
    future = torch.ones(c.T_q, c.T_k, dtype=torch.bool).tril(c.T_k - c.T_q).logical_not()
    float_mask = bias.masked_fill(future, float("-inf"))  # (H, T_q, T_k): added to the scaled scores
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=float_mask)
    torch.testing.assert_close(solution.alibi_attention(q, k, v), expected, rtol=1e-12, atol=1e-12)
