# expect: a square root, power or exponent changed
"""Forgets the cube in the tanh approximation."""
import math

import numpy as np


def feed_forward_network(x, W1, b1, W2, b2, activation="relu"):
    h = x @ W1 + b1
    if activation == "relu":
        h = np.maximum(h, 0)
    elif activation == "gelu":
        h = 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h)))
    else:
        raise ValueError(activation)
    return h @ W2 + b2
