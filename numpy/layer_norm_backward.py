"""Backward pass of layer normalization (NumPy).

Shape legend:
    ...  any leading axes, any number of them: none, (N,), (B, T), (B, H, T), ...
    D    d_model, the last axis: the one that is normalised

The forward pass (the numpy/layer_norm kata), over the last axis:

    mean  = mean of x                                   (..., 1)
    var   = mean of (x - mean)^2    (biased: divide by D) (..., 1)
    x_hat = (x - mean) / sqrt(var + eps)                (..., D)
    y     = gamma * x_hat + beta                        (..., D)

Implement layer_norm_backward(dy, x, gamma, eps=1e-5): given dy = dL/dy, return the gradients
of the loss L with respect to x, gamma and beta. Recompute what you need (mean, var, x_hat)
from x: nothing from the forward pass is handed to you. beta is not an argument: no gradient
depends on it.

Arguments:
    dy     (..., D) float64 or float32, the gradient of the loss with respect to y
    x      (..., D) same dtype, the forward pass's input
    gamma  (D,) same dtype, the learned scale
    eps    float, added to the variance inside the square root (default 1e-5, as nn.LayerNorm)
Returns (dx, dgamma, dbeta):
    dx      (..., D)  x's shape
    dgamma  (D,)      summed over EVERY leading axis (every vector used the same gamma)
    dbeta   (D,)      likewise
    all three in x's dtype (float32 in gives float32 out).

A row whose values are all equal (variance 0) must give finite gradients, not NaN.

Rules: do not modify the inputs. Off limits: torch, jax, autograd (derive the gradient yourself).
"""

import numpy as np


def layer_norm_backward(dy: np.ndarray, x: np.ndarray, gamma: np.ndarray,
                        eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    raise NotImplementedError("write the body of layer_norm_backward")
