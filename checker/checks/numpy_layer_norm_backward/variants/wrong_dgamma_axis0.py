# expect: sum over EVERY leading axis
"""Sums dgamma and dbeta over axis 0 only: right for (N, D), wrong for (B, T, D)."""
import numpy as np


def layer_norm_backward(dy, x, gamma, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - mean) * rstd
    g = dy * gamma
    dx = rstd * (g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True))
    return dx, (dy * x_hat).sum(axis=0), dy.sum(axis=0)
