# expect: the epsilon argument has no effect
"""BERT's epsilon = 1e-12 written into the formula; the epsilon argument is never read."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    u = x.mean(axis=-1, keepdims=True)
    s = ((x - u) ** 2).mean(axis=-1, keepdims=True)
    return gamma * (x - u) / np.sqrt(s + 1e-12) + beta
