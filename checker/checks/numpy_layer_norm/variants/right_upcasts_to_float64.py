# followup: float64
"""Converts to float64 "for accuracy" and never converts back: float32 in gives float64 out."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    x = x.astype(np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + epsilon) + beta
