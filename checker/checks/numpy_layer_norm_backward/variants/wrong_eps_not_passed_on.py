# expect: does not use its eps argument
"""The forward is recomputed by a helper, called without eps: the helper's own default replaces the caller's."""
import numpy as np


def _normalise(x, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    return (x - mean) * rstd, rstd


def layer_norm_backward(dy, x, gamma, eps=1e-5):
    x_hat, rstd = _normalise(x)
    lead = tuple(range(x.ndim - 1))
    dgamma = (dy * x_hat).sum(axis=lead)
    dbeta = dy.sum(axis=lead)
    g = dy * gamma
    dx = rstd * (g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True))
    return dx, dgamma, dbeta
