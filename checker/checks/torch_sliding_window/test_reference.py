"""The sliding-window reference against F.scaled_dot_product_attention and a loop, in float64."""

import math

import pytest
import torch
import torch.nn.functional as F

from checker.catalogue import find
from checker.checks.torch_sliding_window import checks as checks
from checker.engine import load_solution

solution = load_solution(find("sliding_window"))


def loop(q, k, v, window):
    """Query by query over the keys max(0, i - window + 1) .. i, a scalar softmax written out."""
    B, H, T, _ = q.shape
    out = torch.zeros(B, H, T, v.size(-1), dtype=q.dtype)
    for b in range(B):
        for h in range(H):
            for i in range(T):
                keys = range(max(0, i - window + 1), i + 1)
                s = torch.stack([q[b, h, i] @ k[b, h, j] / math.sqrt(q.size(-1)) for j in keys])
                w = torch.exp(s - s.max())
                w = w / w.sum()
                out[b, h, i] = sum(w[n] * v[b, h, j] for n, j in enumerate(keys))
    return out


@pytest.mark.parametrize("c", checks.CASES, ids=lambda c: c.label)
def test_reference_equals_the_builtin_with_the_mask_and_a_loop(c):
    q, k, v, window = checks.inputs(c, "float64")
    out = solution.sliding_window_attention(q, k, v, window)
    mask = solution.sliding_window_mask(c.T, window)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(out, loop(q, k, v, window), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("T, window", [(6, 3), (5, 1), (4, 4), (3, 7), (1, 2), (12, 5)])
def test_mask_counts_window_keys_ending_at_the_diagonal(T, window):
    mask = solution.sliding_window_mask(T, window)
    assert mask.dtype == torch.bool and mask.shape == (T, T)
    for i in range(T):
        assert mask[i].nonzero().flatten().tolist() == list(range(max(0, i - window + 1), i + 1))


def test_long_window_is_causal_and_window_one_copies_v():
    q, k, v, _ = checks.inputs(checks.CASES[0], "float64")
    T = q.size(-2)
    causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(solution.sliding_window_attention(q, k, v, T + 3), causal, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(solution.sliding_window_attention(q, k, v, 1), v, rtol=1e-12, atol=1e-12)


def test_window_below_one_raises():
    with pytest.raises(ValueError):
        solution.sliding_window_mask(3, 0)
