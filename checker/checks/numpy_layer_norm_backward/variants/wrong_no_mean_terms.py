# expect: a term dropped from a sum, or a factor from a product
"""Differentiates x_hat = (x - mean) / std as if mean and std were constants."""
import numpy as np


def layer_norm_backward(dy, x, gamma, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    x_hat = (x - mean) / np.sqrt(var + eps)
    lead = tuple(range(x.ndim - 1))
    dx = dy * gamma / np.sqrt(var + eps)
    return dx, (dy * x_hat).sum(axis=lead), dy.sum(axis=lead)
