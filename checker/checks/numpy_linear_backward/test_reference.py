"""The NumPy linear backward reference agrees with torch autograd of y = x @ W + b (float64), and with
nn.Linear's gradients (whose weight is stored transposed, (D_out, D_in))."""

import numpy as np
import pytest
import torch

from checker import catalogue, engine

solution = engine.load_solution(catalogue.find("numpy/linear_backward"))


@pytest.mark.parametrize("lead", [(), (6,), (2, 5), (2, 3, 4), (2, 3, 4, 5)])
def test_matches_autograd_of_x_at_W_plus_b(lead):
    rng = np.random.default_rng(len(lead))
    x, W, b = rng.standard_normal((*lead, 4)), rng.standard_normal((4, 3)), rng.standard_normal(3)
    dout = rng.standard_normal((*lead, 3))
    xt, Wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, W, b))
    (xt @ Wt + bt).backward(torch.from_numpy(dout))
    for got, expected, shape in zip(solution.linear_backward(dout, x, W), (xt.grad, Wt.grad, bt.grad),
                                    ((*lead, 4), (4, 3), (3,))):
        assert got.shape == shape and got.dtype == np.float64
        np.testing.assert_allclose(got, expected.numpy(), rtol=1e-12, atol=1e-12)


def test_matches_nn_linear_and_keeps_float32():
    torch.manual_seed(0)
    layer = torch.nn.Linear(5, 7, dtype=torch.float64)
    x = torch.randn(3, 2, 5, dtype=torch.float64, requires_grad=True)
    dout = torch.randn(3, 2, 7, dtype=torch.float64)
    layer(x).backward(dout)
    W = layer.weight.detach().numpy().T  # nn.Linear computes x @ weight.T + bias
    dx, dW, db = solution.linear_backward(dout.numpy(), x.detach().numpy(), W)
    np.testing.assert_allclose(dx, x.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dW, layer.weight.grad.numpy().T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(db, layer.bias.grad.numpy(), rtol=1e-12, atol=1e-12)
    assert all(g.dtype == np.float32 for g in solution.linear_backward(
        dout.numpy().astype(np.float32), x.detach().numpy().astype(np.float32), W.astype(np.float32)))
