# expect: applied after the second layer as well
"""Applies the activation to the output too."""
import math

import numpy as np


def feed_forward_network(x, W1, b1, W2, b2, activation="relu"):
    if activation == "relu":
        act = lambda h: np.maximum(0, h)
    elif activation == "gelu":
        act = lambda h: 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))
    else:
        raise ValueError(activation)
    return act(act(x @ W1 + b1) @ W2 + b2)
