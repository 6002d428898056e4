"""Add & Norm: a residual connection followed by layer normalization (NumPy).

Shape legend:
    ...  any leading axes: (B, T) for a batch of sequences (the NumPy tutorial), (N,) for a batch of vectors
    D    d_model, the last axis: the one that is normalised

Implement both functions, as the NumPy tutorial does:

    layer_norm(x, gamma, beta, epsilon=1e-6) = gamma * (x - mean) / sqrt(var + epsilon) + beta
        mean and var over the last axis; var is the biased variance (divide by D, as np.var does)
    add_and_norm(x, sublayer_output, gamma, beta) = layer_norm(x + sublayer_output, gamma, beta)
        the residual is added FIRST, then the sum is normalised (post-norm, "Add & Norm" in the paper)

Arguments:
    x                (..., D) float array: the input of the sublayer (the residual)
    sublayer_output  (..., D) float array: what the sublayer (attention or FFN) returned for x
    gamma            (D,) float array: the learned scale
    beta             (D,) float array: the learned shift
    epsilon          float: added to the variance inside the square root (default 1e-6, as in the NumPy tutorial)
Returns (both functions):
    (..., D), the shape and the dtype of x (float32 in gives float32 out; float64 stays float64).

A row whose values are all equal has variance 0: it must give beta, not NaN.

Rules: NumPy only; the file must not import torch (this kata is the NumPy track).
Do not modify the arguments (no in-place x += ...).
"""

import numpy as np


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, epsilon: float = 1e-6) -> np.ndarray:
    raise NotImplementedError("write the body of layer_norm")


def add_and_norm(x: np.ndarray, sublayer_output: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    raise NotImplementedError("write the body of add_and_norm")
