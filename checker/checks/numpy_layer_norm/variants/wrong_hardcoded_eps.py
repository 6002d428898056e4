# expect: does not use its epsilon argument
"""A fixed 1e-5 in the formula (PyTorch's default) where the epsilon argument belongs."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + 1e-5) + beta
