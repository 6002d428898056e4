# expect: a branch taken always, or never (training, eval, a flag)
"""Seed 000's function with the new parameter added but never used: always ReLU."""
import numpy as np


def feed_forward_network(x, W1, b1, W2, b2, activation="relu"):
    if activation not in ("relu", "gelu"):
        raise ValueError(activation)
    hidden = np.maximum(0, np.matmul(x, W1) + b1)
    return np.matmul(hidden, W2) + b2
