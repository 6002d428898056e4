# expect: you multiply by the transposed weights
"""Treats W1 and W2 as nn.Linear weights (out, in) and multiplies by their transposes."""
import numpy as np


def feed_forward_network(x, W1, b1, W2, b2, activation="relu"):
    h = x @ W1.T + b1
    if activation == "relu":
        h = np.maximum(h, 0)
    elif activation == "gelu":
        h = 0.5 * h * (1 + np.tanh(0.7978845608028654 * (h + 0.044715 * h**3)))
    else:
        raise ValueError(activation)
    return h @ W2.T + b2
