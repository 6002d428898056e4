# expect: raised no error, where the contract says it raises ValueError
"""Anything that is not "gelu" silently becomes ReLU."""
import math

import numpy as np


def feed_forward_network(x, W1, b1, W2, b2, activation="relu"):
    h = x @ W1 + b1
    if activation == "gelu":
        h = 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))
    else:
        h = np.maximum(h, 0)
    return h @ W2 + b2
