"""The NumPy Add & Norm reference agrees with torch.nn.LayerNorm(eps=1e-6) applied to x + sublayer_output."""

import importlib.util

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from checker.catalogue import SOLUTIONS


def _reference():
    spec = importlib.util.spec_from_file_location("ref_numpy_add_and_norm", SOLUTIONS / "numpy" / "add_and_norm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _reference()


@pytest.mark.parametrize("shape", [(2, 5, 8), (6, 7), (3, 4, 6)])
def test_add_and_norm_matches_nn_layer_norm_of_the_sum(shape):
    g = torch.Generator().manual_seed(sum(shape))
    x = torch.randn(*shape, generator=g, dtype=torch.float64) * 1.5 + 0.3
    s = torch.randn(*shape, generator=g, dtype=torch.float64) * 0.8
    ln = torch.nn.LayerNorm(shape[-1], eps=1e-6, dtype=torch.float64)
    with torch.no_grad():
        ln.weight.copy_(torch.randn(shape[-1], generator=g, dtype=torch.float64))
        ln.bias.copy_(torch.randn(shape[-1], generator=g, dtype=torch.float64))
        expected = ln(x + s).numpy()
    got = ref.add_and_norm(x.numpy(), s.numpy(), ln.weight.detach().numpy(), ln.bias.detach().numpy())
    assert got.shape == shape and got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("epsilon", [1e-6, 1e-2])
def test_layer_norm_matches_torch_functional_layer_norm(epsilon):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(3, 4, 9, generator=g, dtype=torch.float64) * 0.05
    x[0, 0] = 2.5  # a constant row: variance 0
    gamma = torch.randn(9, generator=g, dtype=torch.float64)
    beta = torch.randn(9, generator=g, dtype=torch.float64)
    expected = F.layer_norm(x, (9,), weight=gamma, bias=beta, eps=epsilon).numpy()
    got = ref.layer_norm(x.numpy(), gamma.numpy(), beta.numpy(), epsilon)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_float32_in_gives_float32_out():
    rng = np.random.default_rng(0)
    x, s = rng.standard_normal((2, 3, 5)).astype(np.float32), rng.standard_normal((2, 3, 5)).astype(np.float32)
    assert ref.add_and_norm(x, s, np.ones(5, np.float32), np.zeros(5, np.float32)).dtype == np.float32
