"""The NumPy feed-forward reference against PyTorch: F.linear with F.relu / F.gelu(approximate="tanh"), float64."""

import importlib.util

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from checker.catalogue import SOLUTIONS


def _reference():
    spec = importlib.util.spec_from_file_location("ref_numpy_ffn", SOLUTIONS / "numpy" / "feed_forward.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.feed_forward_network


feed_forward_network = _reference()
TORCH_ACT = {"relu": F.relu, "gelu": lambda h: F.gelu(h, approximate="tanh")}


def _weights(lead, d_model, d_ff, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*lead, d_model, generator=g, dtype=torch.float64)
    # nn.Linear layout (out, in); the kata stores (in, out), so the NumPy side gets the transposes
    W1 = torch.randn(d_ff, d_model, generator=g, dtype=torch.float64)
    W2 = torch.randn(d_model, d_ff, generator=g, dtype=torch.float64) / d_ff**0.5
    b1, b2 = torch.randn(d_ff, generator=g, dtype=torch.float64), torch.randn(d_model, generator=g, dtype=torch.float64)
    return x, W1, b1, W2, b2


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("lead", [(2, 5), (7,)])
def test_matches_torch_linear_and_activation(activation, lead):
    x, W1, b1, W2, b2 = _weights(lead, 6, 10, seed=len(lead))
    expected = F.linear(TORCH_ACT[activation](F.linear(x, W1, b1)), W2, b2)
    got = feed_forward_network(x.numpy(), W1.T.numpy(), b1.numpy(), W2.T.numpy(), b2.numpy(), activation)
    assert got.shape == (*lead, 6) and got.dtype == np.float64
    np.testing.assert_allclose(got, expected.numpy(), rtol=1e-12, atol=1e-12)


def test_relu_is_the_default_and_an_unknown_activation_raises():
    x, W1, b1, W2, b2 = (a.numpy() for a in _weights((3,), 4, 9, seed=3))
    args = (x, W1.T, b1, W2.T, b2)
    np.testing.assert_array_equal(feed_forward_network(*args), feed_forward_network(*args, "relu"))
    with pytest.raises(ValueError):
        feed_forward_network(*args, "swish")


def test_tanh_gelu_differs_from_the_exact_erf_gelu_by_about_1e_3():
    # The statement says so (the PyTorch kata uses the exact form): check the claim.
    h = torch.linspace(-6, 6, 100001, dtype=torch.float64)
    gap = (F.gelu(h, approximate="tanh") - F.gelu(h)).abs().max().item()
    assert 1e-4 < gap < 1e-3


def test_float32_in_gives_float32_out():
    args = [a.numpy().astype(np.float32) for a in _weights((2, 3), 5, 8, seed=4)]
    args[1], args[3] = args[1].T, args[3].T
    for activation in ("relu", "gelu"):
        assert feed_forward_network(*args, activation).dtype == np.float32
