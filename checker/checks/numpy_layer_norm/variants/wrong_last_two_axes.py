# expect: the axis a reduction, softmax, cumsum or concatenation runs over
"""Statistics over the last two axes."""

import numpy as np


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, epsilon: float = 1e-6) -> np.ndarray:
    """Normalise each vector over its last axis, then scale by gamma (D,) and shift by beta (D,)."""
    # 1) statistics of every vector; keepdims leaves a trailing axis of 1 so they broadcast back
    mean = x.mean(axis=(-2, -1), keepdims=True)  # (..., D) -> (..., 1)
    var = ((x - mean) ** 2).mean(axis=(-2, -1), keepdims=True)  # (..., 1), biased: divide by D
    # 2) zero mean, unit variance; epsilon inside the square root keeps a constant row finite
    x_hat = (x - mean) / np.sqrt(var + epsilon)  # (..., D) / (..., 1) -> (..., D)
    # 3) learned scale and shift, broadcast over the leading axes
    return gamma * x_hat + beta  # (D,) * (..., D) + (D,) -> (..., D)
