"""The NumPy attention backward reference agrees with torch autograd through F.scaled_dot_product_attention (float64)."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine

solution = engine.load_solution(catalogue.find("numpy/attention_backward"))


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
def test_matches_autograd_through_torch_sdpa(lead, kind):
    rng = np.random.default_rng(len(lead))
    T_q, T_k, d_k, d_v = (6, 6, 4, 5) if kind == "causal" else (4, 7, 3, 5)
    q, k, v = (rng.standard_normal((*lead, T, d)) for T, d in ((T_q, d_k), (T_k, d_k), (T_k, d_v)))
    dout = rng.standard_normal((*lead, T_q, d_v))
    mask = _mask(kind, lead, T_q, T_k, rng)
    dq, dk, dv = solution.attention_backward(dout, q, k, v, mask)

    # PyTorch's bool attn_mask means True = may attend (the catalogue's convention); a query that
    # sees no key has a zero output there and zero gradients.
    tq, tk, tv = (torch.from_numpy(a).requires_grad_(True) for a in (q, k, v))
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=None if mask is None else torch.from_numpy(mask))
    (out * torch.from_numpy(dout)).sum().backward()
    for got, want in ((dq, tq.grad), (dk, tk.grad), (dv, tv.grad)):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-11, atol=1e-13)


def test_matches_autograd_through_an_explicit_formula():
    """A second, independent route: the forward written out with masked_fill, differentiated by autograd."""
    rng = np.random.default_rng(7)
    q, k, v = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 6, 4))
    dout, mask = rng.standard_normal((2, 5, 4)), rng.random((2, 1, 6)) < 0.7
    mask[..., 0] = True
    tq, tk, tv = (torch.from_numpy(a).requires_grad_(True) for a in (q, k, v))
    tmask = torch.from_numpy(mask)
    scores = (tq @ tk.transpose(-2, -1) / math.sqrt(3)).masked_fill(~tmask, float("-inf"))
    ((scores.softmax(-1) @ tv) * torch.from_numpy(dout)).sum().backward()
    for got, want in zip(solution.attention_backward(dout, q, k, v, mask), (tq.grad, tk.grad, tv.grad)):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-11, atol=1e-13)


def test_float32_stays_float32():
    rng = np.random.default_rng(0)
    q, k, v, dout = (rng.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(4))
    grads = solution.attention_backward(dout, q, k, v, np.tril(np.ones((3, 3), dtype=bool)))
    assert [g.dtype for g in grads] == [np.float32] * 3
