# expect: cancels catastrophically
"""var = E[x^2] - E[x]^2: right on paper, but it loses all precision when the mean is large."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = x.mean(axis=-1, keepdims=True)
    var = (x * x).mean(axis=-1, keepdims=True) - mean * mean
    return gamma * (x - mean) / np.sqrt(var + epsilon) + beta
