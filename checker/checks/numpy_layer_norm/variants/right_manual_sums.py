"""Explicit sums over the last axis, [..., None] instead of keepdims, einsum for the squares, a reciprocal square root."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    d = x.shape[-1]
    centered = x - (x.sum(axis=-1) / d)[..., None]
    var = np.einsum("...d,...d->...", centered, centered) / d
    inv_std = 1.0 / np.sqrt(var + epsilon)
    return centered * inv_std[..., None] * gamma + beta
