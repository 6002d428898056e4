"""Backward pass of softmax (NumPy).

Shape legend:
    y.shape  any shape, for example attention weights (B, H, T_q, T_k); softmax ran along one axis of it

The forward pass was y = softmax(x, axis): every slice of y along `axis` is a probability
distribution (entries in [0, 1] summing to 1).

Implement softmax_backward(dy, y, axis=-1): given dy = dL/dy and the forward OUTPUT y, return
dx = dL/dx, the gradient with respect to the logits x. x itself is not given: everything the
gradient needs is in y.

Arguments:
    dy    np.ndarray, y's shape and dtype (float64 or float32): the gradient flowing back into y
    y     np.ndarray, the softmax output (NOT the logits)
    axis  int, the axis softmax normalised over (negative counts from the end); default -1, the last
Returns:
    dx  np.ndarray with y's shape and dtype (float32 in, float32 out).

Rules: y may hold exact 0s and 1s (a saturated softmax): dx must stay finite;
do not modify the inputs.
Off limits: torch, jax, autograd (no automatic differentiation: derive it).
"""

import numpy as np


def softmax_backward(dy: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    raise NotImplementedError("write the body of softmax_backward")
