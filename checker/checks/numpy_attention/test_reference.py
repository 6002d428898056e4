"""The NumPy attention reference agrees with torch.nn.functional.scaled_dot_product_attention (float64)."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine

solution = engine.load_solution(catalogue.find("numpy/attention"))


def _mask(kind, lead, T_q, T_k, rng):
    if kind is None:
        return None
    if kind == "causal":
        return np.tril(np.ones((T_q, T_k), dtype=bool))
    mask = rng.random((*lead, T_q, T_k)) < 0.6
    mask[..., 0] = True
    if kind == "random, one query sees nothing":
        mask[(0,) * len(lead) + (1,)] = False
    return mask


@pytest.mark.parametrize("lead", [(), (2,), (3, 2)])
@pytest.mark.parametrize("kind", [None, "causal", "random", "random, one query sees nothing"])
def test_matches_torch_sdpa(lead, kind):
    rng = np.random.default_rng(len(lead))
    T_q, T_k, d_k, d_v = (6, 6, 4, 5) if kind == "causal" else (4, 7, 3, 5)
    q, k, v = (rng.standard_normal((*lead, T, d)) for T, d in ((T_q, d_k), (T_k, d_k), (T_k, d_v)))
    mask = _mask(kind, lead, T_q, T_k, rng)
    out, weights = solution.scaled_dot_product_attention(q, k, v, mask)

    # PyTorch's bool attn_mask has the catalogue's meaning (True = may attend); a query that sees no
    # key gives a zero output there too.
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    tmask = None if mask is None else torch.from_numpy(mask)
    expected = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tmask)
    np.testing.assert_allclose(out, expected.numpy(), rtol=1e-12, atol=1e-14)

    # The weights, written independently: softmax over the visible keys only, zero elsewhere.
    scores = tq @ tk.transpose(-2, -1) / math.sqrt(d_k)
    if tmask is not None:
        scores = scores.masked_fill(~tmask, float("-inf"))
    expected_w = torch.softmax(scores, dim=-1).nan_to_num(nan=0.0)
    np.testing.assert_allclose(weights, expected_w.numpy(), rtol=1e-12, atol=1e-14)
    assert out.shape == (*lead, T_q, d_v) and weights.shape == (*lead, T_q, T_k)


def test_float32_stays_float32():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(3))
    out, weights = solution.scaled_dot_product_attention(q, k, v, np.tril(np.ones((3, 3), dtype=bool)))
    assert out.dtype == np.float32 and weights.dtype == np.float32
