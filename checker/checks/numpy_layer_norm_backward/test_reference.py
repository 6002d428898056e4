"""The NumPy layer-norm backward reference agrees with torch autograd through nn.LayerNorm (float64)."""

import numpy as np
import pytest
import torch

from checker import catalogue, engine

solution = engine.load_solution(catalogue.find("numpy/layer_norm_backward"))


@pytest.mark.parametrize("shape, eps", [((7,), 1e-5), ((6, 7), 1e-5), ((2, 5, 8), 1e-5), ((3, 2, 4, 6), 1e-2)])
def test_matches_autograd_through_nn_layer_norm(shape, eps):
    g = torch.Generator().manual_seed(sum(shape))
    D = shape[-1]
    x = (torch.randn(*shape, generator=g, dtype=torch.float64) * 0.2 + 0.5).requires_grad_(True)
    if len(shape) > 1:
        x.data[(0,) * (len(shape) - 1)] = 2.5  # one constant vector: variance 0
    ln = torch.nn.LayerNorm(D, eps=eps, dtype=torch.float64)
    with torch.no_grad():
        ln.weight.copy_(torch.randn(D, generator=g, dtype=torch.float64))
        ln.bias.copy_(torch.randn(D, generator=g, dtype=torch.float64))
    dy = torch.randn(*shape, generator=g, dtype=torch.float64)
    (ln(x) * dy).sum().backward()
    args = (dy.numpy(), x.detach().numpy(), ln.weight.detach().numpy()) + ((eps,) if eps != 1e-5 else ())
    dx, dgamma, dbeta = solution.layer_norm_backward(*args)
    assert dx.shape == shape and dgamma.shape == dbeta.shape == (D,)
    np.testing.assert_allclose(dx, x.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dgamma, ln.weight.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dbeta, ln.bias.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_default_eps_is_nn_layer_norms_1e_5():
    import inspect

    assert inspect.signature(solution.layer_norm_backward).parameters["eps"].default == 1e-5
    assert torch.nn.LayerNorm(4).eps == 1e-5


def test_matches_central_differences():
    """An independent check that needs no autograd: (L(x + h e) - L(x - h e)) / 2h for L = sum(dy * y)."""
    rng = np.random.default_rng(3)
    x, dy = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    gamma, beta, eps, h = rng.standard_normal(5), rng.standard_normal(5), 1e-5, 1e-6

    def loss(x, gamma, beta):
        x_hat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
        return np.sum(dy * (gamma * x_hat + beta))

    def numeric(f, a):
        grad = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            e = np.zeros_like(a)
            e[i] = h
            grad[i] = (f(a + e) - f(a - e)) / (2 * h)
        return grad

    dx, dgamma, dbeta = solution.layer_norm_backward(dy, x, gamma)
    np.testing.assert_allclose(dx, numeric(lambda a: loss(a, gamma, beta), x), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(dgamma, numeric(lambda a: loss(x, a, beta), gamma), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(dbeta, numeric(lambda a: loss(x, gamma, a), beta), rtol=1e-6, atol=1e-7)


def test_float32_stays_float32():
    rng = np.random.default_rng(0)
    dy, x = (rng.standard_normal((2, 3, 5)).astype(np.float32) for _ in range(2))
    out = solution.layer_norm_backward(dy, x, np.ones(5, np.float32))
    assert [a.dtype for a in out] == [np.float32] * 3
