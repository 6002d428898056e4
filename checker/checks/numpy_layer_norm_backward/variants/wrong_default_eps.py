# expect: this kata's default is nn.LayerNorm's
"""Keeps the numpy/layer_norm kata's default epsilon, 1e-6."""
import numpy as np


def layer_norm_backward(dy, x, gamma, eps=1e-6):
    mean = x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - mean) * rstd
    g = dy * gamma
    dx = rstd * (g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True))
    lead = tuple(range(x.ndim - 1))
    return dx, (dy * x_hat).sum(axis=lead), dy.sum(axis=lead)
