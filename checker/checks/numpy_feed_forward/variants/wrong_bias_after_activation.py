# expect: add b1 before the activation
"""Adds b1 after the activation instead of before it."""
import numpy as np


def feed_forward_network(x, W1, b1, W2, b2, activation="relu"):
    h = x @ W1
    if activation == "relu":
        h = np.maximum(h, 0)
    elif activation == "gelu":
        h = 0.5 * h * (1 + np.tanh(0.7978845608028654 * (h + 0.044715 * h**3)))
    else:
        raise ValueError(activation)
    return (h + b1) @ W2 + b2
