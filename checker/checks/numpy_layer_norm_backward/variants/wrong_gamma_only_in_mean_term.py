# expect: one variable read where another belongs
"""The variance term reads dy instead of g = dy · gamma."""

import numpy as np


def layer_norm_backward(dy: np.ndarray, x: np.ndarray, gamma: np.ndarray,
                        eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients (dx, dgamma, dbeta) of layer norm over the last axis, given dy = dL/dy."""
    # 1) recompute the forward pass's statistics (two passes: subtract the mean before squaring)
    mean = x.mean(axis=-1, keepdims=True)  # (..., D) -> (..., 1)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # (..., 1), biased
    rstd = 1.0 / np.sqrt(var + eps)  # (..., 1)
    x_hat = (x - mean) * rstd  # (..., D)
    # 2) gamma and beta are shared by every vector: sum over all the leading axes
    lead = tuple(range(x.ndim - 1))
    dgamma = (dy * x_hat).sum(axis=lead)  # (..., D) -> (D,)
    dbeta = dy.sum(axis=lead)  # (..., D) -> (D,)
    # 3) through x_hat: the mean and the variance depend on every entry of the row
    g = dy * gamma  # dL/dx_hat, (..., D)
    dx = rstd * (g - g.mean(axis=-1, keepdims=True) - x_hat * (dy * x_hat).mean(axis=-1, keepdims=True))
    return dx, dgamma, dbeta
