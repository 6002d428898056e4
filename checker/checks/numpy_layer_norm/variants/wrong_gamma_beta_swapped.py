# expect: gamma and beta are swapped
"""Scales by beta and shifts by gamma."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return beta * (x - mean) / np.sqrt(var + epsilon) + gamma
