# expect: a term dropped from a sum, or a factor from a product
"""Forgets the residual connection: normalises the sublayer output alone."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + epsilon) + beta


def add_and_norm(x, sublayer_output, gamma, beta):
    return layer_norm(sublayer_output, gamma, beta)
