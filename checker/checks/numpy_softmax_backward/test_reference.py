"""The NumPy softmax backward reference agrees with torch autograd through torch.softmax (float64), on
every axis, and with the full Jacobian diag(y) - y yᵀ written out in the test."""

import numpy as np
import pytest
import torch

from checker import catalogue, engine

solution = engine.load_solution(catalogue.find("numpy/softmax_backward"))


@pytest.mark.parametrize("shape, axis", [((2, 3, 5), -1), ((4, 3, 6), 0), ((2, 5, 3), 1), ((2, 3, 4, 5), -1), ((6,), 0)])
@pytest.mark.parametrize("scale", [1.0, 1e3])
def test_matches_autograd_of_torch_softmax(shape, axis, scale):
    rng = np.random.default_rng(len(shape))
    x, dy = rng.standard_normal(shape) * scale, rng.standard_normal(shape)
    xt = torch.tensor(x, requires_grad=True)
    y = torch.softmax(xt, dim=axis)
    y.backward(torch.from_numpy(dy))
    got = solution.softmax_backward(dy, y.detach().numpy(), axis=axis)
    assert got.dtype == np.float64 and got.shape == shape
    np.testing.assert_allclose(got, xt.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_matches_the_jacobian_matrix_and_keeps_float32():
    rng = np.random.default_rng(7)
    x, dy = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    y = np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)
    for row in range(4):
        jacobian = np.diag(y[row]) - np.outer(y[row], y[row])  # dy_i/dx_j = y_i (δ_ij - y_j)
        np.testing.assert_allclose(solution.softmax_backward(dy, y)[row], jacobian.T @ dy[row], rtol=1e-12, atol=1e-14)
    assert solution.softmax_backward(dy.astype(np.float32), y.astype(np.float32)).dtype == np.float32
