"""Explicit sums over the last axis, [..., None] instead of keepdims, einsum for the squares, a reciprocal root;
add_and_norm adds with np.add into a new array."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    d = x.shape[-1]
    centred = x - (x.sum(axis=-1) / d)[..., None]
    var = np.einsum("...d,...d->...", centred, centred) / d
    inv = 1.0 / np.sqrt(var + epsilon)
    return centred * inv[..., None] * gamma + beta


def add_and_norm(x, sublayer_output, gamma, beta):
    return layer_norm(np.add(sublayer_output, x), gamma, beta)
