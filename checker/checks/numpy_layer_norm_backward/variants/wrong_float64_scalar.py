# expect: float32 inputs gave a float64 dx and a float64 dgamma
"""Right values, but np.float64(D) in the arithmetic turns float32 arrays into float64 (NumPy 2)."""
import numpy as np


def layer_norm_backward(dy, x, gamma, eps=1e-5):
    D = np.float64(x.shape[-1])
    mean = x.sum(axis=-1, keepdims=True) / D
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).sum(axis=-1, keepdims=True) / D + eps)
    x_hat = (x - mean) * rstd
    g = dy * gamma
    dx = rstd / D * (D * g - g.sum(axis=-1, keepdims=True) - x_hat * (g * x_hat).sum(axis=-1, keepdims=True))
    lead = tuple(range(x.ndim - 1))
    return dx, (dy * x_hat).sum(axis=lead), dy.sum(axis=lead)
