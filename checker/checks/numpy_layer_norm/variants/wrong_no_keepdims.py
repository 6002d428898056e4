# expect: with keepdims=True
"""Statistics without keepdims: (B, T) does not broadcast against (B, T, D)."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = np.mean(x, axis=-1)
    var = np.var(x, axis=-1)
    return gamma * (x - mean) / np.sqrt(var + epsilon) + beta
