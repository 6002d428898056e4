"""The NumPy layer-norm reference agrees with torch.nn.functional.layer_norm (and nn.LayerNorm) in float64."""

import importlib.util

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from checker.catalogue import SOLUTIONS


def _reference():
    spec = importlib.util.spec_from_file_location("ref_numpy_layer_norm", SOLUTIONS / "numpy" / "layer_norm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.layer_norm


layer_norm = _reference()


@pytest.mark.parametrize("shape, epsilon", [((2, 5, 8), 1e-6), ((6, 7), 1e-6), ((3, 4, 6), 1e-2)])
def test_matches_torch_functional_layer_norm(shape, epsilon):
    g = torch.Generator().manual_seed(sum(shape))
    x = torch.randn(*shape, generator=g, dtype=torch.float64) * 2 + 0.5
    x[(0,) * (len(shape) - 1)] = 2.5  # one constant row: variance 0
    gamma = torch.randn(shape[-1], generator=g, dtype=torch.float64)
    beta = torch.randn(shape[-1], generator=g, dtype=torch.float64)
    expected = F.layer_norm(x, (shape[-1],), weight=gamma, bias=beta, eps=epsilon)
    got = layer_norm(x.numpy(), gamma.numpy(), beta.numpy(), epsilon)
    assert got.shape == shape and got.dtype == np.float64
    np.testing.assert_allclose(got, expected.numpy(), rtol=1e-12, atol=1e-12)


def test_default_epsilon_is_seed_000s_1e_6_and_matches_nn_layer_norm():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 4, 10, generator=g, dtype=torch.float64) * 0.01  # small variance: epsilon matters
    ln = torch.nn.LayerNorm(10, eps=1e-6, dtype=torch.float64)
    with torch.no_grad():
        ln.weight.copy_(torch.randn(10, generator=g, dtype=torch.float64))
        ln.bias.copy_(torch.randn(10, generator=g, dtype=torch.float64))
        expected = ln(x).numpy()
    got = layer_norm(x.numpy(), ln.weight.detach().numpy(), ln.bias.detach().numpy())
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_float32_in_gives_float32_out():
    x = np.random.default_rng(0).standard_normal((2, 3, 5)).astype(np.float32)
    assert layer_norm(x, np.ones(5, np.float32), np.zeros(5, np.float32)).dtype == np.float32
