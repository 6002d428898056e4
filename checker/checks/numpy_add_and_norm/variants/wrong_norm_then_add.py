# expect: you normalise before adding
"""Normalises the residual, then adds the sublayer output: layer_norm(x) + sublayer_output."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + epsilon) + beta


def add_and_norm(x, sublayer_output, gamma, beta):
    return layer_norm(x, gamma, beta) + sublayer_output
