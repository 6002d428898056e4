# expect: unbiased variance
"""Divides the variance by D - 1 (ddof=1), as torch.var does by default."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True, ddof=1)
    return gamma * (x - mean) / np.sqrt(var + epsilon) + beta
