# expect: a term dropped from a sum, or a factor from a product
"""Forgets the shift."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + epsilon)
