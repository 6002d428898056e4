"""The relative position bias reference against Hugging Face T5's _relative_position_bucket (copied
below, names unchanged, from transformers' modeling_t5.py) and a bias written element by element."""

import math

import pytest
import torch

from checker.catalogue import find
from checker.checks.torch_relative_position_bias import checks as checks
from checker.engine import load_solution

solution = load_solution(find("relative_position_bias"))


def hf_relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128, *,
                                log_dtype=torch.float32):
    """transformers.models.t5.modeling_t5.T5Attention._relative_position_bucket, as published (the log's
    dtype a parameter, so float64 can be compared too)."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.to(log_dtype) / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


_SETTINGS = [(bidirectional, num_buckets, max_distance) for bidirectional in (True, False)
             for num_buckets in (8, 10, 12, 16, 20, 32, 64) for max_distance in (16, 20, 24, 40, 64, 128)]


@pytest.mark.parametrize("bidirectional, num_buckets, max_distance", _SETTINGS)
def test_buckets_equal_hf_t5(bidirectional, num_buckets, max_distance):
    rp = torch.arange(-500, 501).view(7, 143)
    got = solution.relative_position_bucket(rp, bidirectional, num_buckets, max_distance)
    assert got.dtype == torch.int64 and got.shape == rp.shape
    assert torch.equal(got, hf_relative_position_bucket(rp, bidirectional, num_buckets, max_distance))


def test_the_checked_settings_give_the_same_buckets_with_a_float64_log():
    """The contract lets the log be float32 (T5) or float64: true on every setting the checks use."""
    rp = torch.arange(-checks._OFFSETS - 200, checks._OFFSETS + 201)
    settings = checks._BUCKET_SETTINGS + [(c.bidirectional, c.num_buckets, c.max_distance)
                                          for c in checks.CASES + [checks.TIMING]]
    for bidirectional, num_buckets, max_distance in settings:
        assert torch.equal(hf_relative_position_bucket(rp, bidirectional, num_buckets, max_distance),
                           hf_relative_position_bucket(rp, bidirectional, num_buckets, max_distance,
                                                       log_dtype=torch.float64))


def test_t5_defaults_spelled_out():
    rp = torch.tensor([-200, -128, -127, -64, -9, -8, -7, -1, 0, 1, 7, 8, 9, 64, 127, 128, 200])
    expected = [15, 15, 15, 14, 8, 8, 7, 1, 0, 17, 23, 24, 24, 30, 31, 31, 31]  # 64: 8 + log(8)/log(16)·8 = 14
    assert solution.relative_position_bucket(rp).tolist() == expected
    assert hf_relative_position_bucket(rp).tolist() == expected


@pytest.mark.parametrize("c", checks.CASES, ids=lambda c: c.label)
def test_bias_element_by_element(c):
    weight, T_q, T_k, bidirectional, max_distance = checks.inputs(c, "float64")
    rel = torch.tensor([[j - (i + T_k - T_q) for j in range(T_k)] for i in range(T_q)])
    buckets = hf_relative_position_bucket(rel, bidirectional, c.num_buckets, max_distance)
    expected = torch.tensor([[[float(weight[buckets[i, j], h]) for j in range(T_k)] for i in range(T_q)]
                             for h in range(c.H)], dtype=torch.float64).unsqueeze(0)
    got = solution.relative_position_bias(weight, T_q, T_k, bidirectional, max_distance)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


def test_every_named_mistake_differs_from_the_reference_somewhere():
    rp = checks._offsets()
    for m in checks._BUCKET_MISTAKES:
        assert any(not torch.equal(m.impl(rp, *s), solution.relative_position_bucket(rp, *s))
                   for s in checks._BUCKET_SETTINGS), m.name
    for m in checks.MISTAKES:
        differs = []
        for c in checks.CASES:
            args = checks.inputs(c, "float64")
            try:
                differs.append(not torch.equal(m.impl(*args), solution.relative_position_bias(*args)))
            except IndexError:  # a bucket past the table: the user's code raises too
                differs.append(True)
        assert any(differs), m.name
