"""Layer normalization (NumPy).

Shape legend:
    ...  any leading axes: (B, T) for a batch of sequences, (N,) for a batch of vectors
    D    d_model, the last axis: the one that is normalised

Implement layer_norm(x, gamma, beta, epsilon=1e-6): normalise every vector x[..., :] over
its last axis, then scale and shift it:

    mean = mean of x over the last axis
    var  = mean of (x - mean)^2 over the last axis       (biased: divide by D, as np.var does)
    y    = gamma * (x - mean) / sqrt(var + epsilon) + beta

Arguments:
    x        (..., D) float array, rank 2 (N, D) or rank 3 (B, T, D)
    gamma    (D,) float array, the learned scale
    beta     (D,) float array, the learned shift
    epsilon  float, added to the variance inside the square root (default 1e-6, as in the NumPy tutorial)
Returns:
    (..., D), the shape and the dtype of x (float32 in gives float32 out; float64 stays float64).

A row whose values are all equal has variance 0: it must give beta, not NaN.

Rules: NumPy only; the file must not import torch (this kata is the NumPy track).
Do not modify x, gamma or beta (no in-place x -= ...).
"""

import numpy as np


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, epsilon: float = 1e-6) -> np.ndarray:
    raise NotImplementedError("write the body of layer_norm")
