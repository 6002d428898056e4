# expect: modified its input
"""Centres x in place, so the caller's array changes."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    x -= x.mean(axis=-1, keepdims=True)
    x /= np.sqrt((x**2).mean(axis=-1, keepdims=True) + epsilon)
    return gamma * x + beta
