# expect: the axis a reduction, softmax, cumsum or concatenation runs over
"""Hard-codes axis=1: right for (N, D), but normalises over T for (B, T, D)."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + epsilon) + beta
