# expect: unbiased variance
"""Divides the variance by D - 1 (ddof=1), as torch.var does by default."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True, ddof=1)
    return gamma * (x - mean) / np.sqrt(var + epsilon) + beta


def add_and_norm(x, sublayer_output, gamma, beta):
    return layer_norm(x + sublayer_output, gamma, beta)
