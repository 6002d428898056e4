# expect: modified its input
"""Adds the residual in place: x += sublayer_output writes into the caller's array."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + epsilon) + beta


def add_and_norm(x, sublayer_output, gamma, beta):
    x += sublayer_output
    return layer_norm(x, gamma, beta)
