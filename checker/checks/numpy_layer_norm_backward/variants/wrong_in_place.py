# expect: your code modified its input
"""Centres x in place (x -= mean), which writes into the caller's array."""
import numpy as np


def layer_norm_backward(dy, x, gamma, eps=1e-5):
    x -= x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)
    x_hat = x * rstd
    g = dy * gamma
    dx = rstd * (g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True))
    lead = tuple(range(x.ndim - 1))
    return dx, (dy * x_hat).sum(axis=lead), dy.sum(axis=lead)
