# expect: unbiased variance
"""Recomputes the forward pass with ddof=1 (torch's x.std() habit)."""
import numpy as np


def layer_norm_backward(dy, x, gamma, eps=1e-5):
    D = x.shape[-1]
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True, ddof=1)
    rstd = 1.0 / np.sqrt(var + eps)
    x_hat = (x - mean) * rstd
    g = dy * gamma
    dx = rstd * (g - g.sum(axis=-1, keepdims=True) / D - x_hat * (g * x_hat).sum(axis=-1, keepdims=True) / D)
    flat = lambda a: a.reshape(-1, D)
    return dx, flat(dy * x_hat).sum(axis=0), flat(dy).sum(axis=0)
