"""The NumPy softmax reference agrees with torch.softmax (float64), on every axis and at large scale."""

import numpy as np
import pytest
import torch

from checker import catalogue, engine

solution = engine.load_solution(catalogue.find("numpy/softmax"))


@pytest.mark.parametrize("shape, axis", [((2, 3, 5), -1), ((4, 3, 6), 0), ((2, 5, 3), 1), ((4, 7), -1), ((6,), 0)])
@pytest.mark.parametrize("scale", [1.0, 1e4])
def test_matches_torch_softmax(shape, axis, scale):
    x = np.random.default_rng(0).standard_normal(shape) * scale
    got = solution.softmax(x, axis=axis)
    expected = torch.softmax(torch.from_numpy(x), dim=axis).numpy()
    assert got.dtype == np.float64 and got.shape == x.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_float32_stays_float32_and_far_apart_rows_stay_finite():
    x = np.stack([np.zeros(5), np.full(5, -1e4), np.full(5, 1e3)]).astype(np.float32) + np.arange(5, dtype=np.float32)
    got = solution.softmax(x)
    assert got.dtype == np.float32 and np.isfinite(got).all()
    np.testing.assert_allclose(got, torch.softmax(torch.from_numpy(x), dim=-1).numpy(), rtol=1e-6, atol=1e-7)
