"""Seed 000's layer_norm, verbatim (np.mean and np.var, whose default ddof=0 is the biased variance)."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    normalized_x = (x - mean) / np.sqrt(var + epsilon)
    output = gamma * normalized_x + beta
    return output
