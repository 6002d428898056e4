"""Backward pass of a linear layer (NumPy).

Shape legend:
    ...    any number of leading axes (none, (N,), (B, T), (B, H, T), ...): every one is a "batch" axis
    D_in   input features
    D_out  output features

The forward pass was
    y = x @ W + b        x (..., D_in), W (D_in, D_out), b (D_out,)  ->  y (..., D_out)

Implement linear_backward(dout, x, W): given dout = dL/dy, return the gradients of the loss L
with respect to x, W and b.

Arguments:
    dout  np.ndarray (..., D_out), float64 or float32: the gradient flowing back into y
    x     np.ndarray (..., D_in), same dtype: the forward input (same leading axes as dout)
    W     np.ndarray (D_in, D_out), same dtype: the weight (b is not needed: it does not affect any gradient)
Returns:
    (dx, dW, db), all of the inputs' dtype (float32 in, float32 out):
    dx  np.ndarray (..., D_in):     dL/dx, one row per row of x
    dW  np.ndarray (D_in, D_out):   dL/dW, summed over EVERY leading axis (every position used W)
    db  np.ndarray (D_out,):        dL/db, summed over every leading axis

Rules: leading axes of any rank, including none (x of shape (D_in,)); do not modify the inputs.
Off limits: torch, jax, autograd (no automatic differentiation: derive it).
"""

import numpy as np


def linear_backward(dout: np.ndarray, x: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    raise NotImplementedError("write the body of linear_backward")
