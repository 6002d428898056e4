"""Seed 000's feed_forward_network with np.matmul, extended by an if/elif on the activation."""
import math

import numpy as np


def feed_forward_network(x, W1, b1, W2, b2, activation="relu"):
    pre = np.matmul(x, W1) + b1
    if activation == "relu":
        hidden = np.maximum(0, pre)
    elif activation == "gelu":
        c = math.sqrt(2.0 / math.pi)
        hidden = 0.5 * pre * (1.0 + np.tanh(c * (pre + 0.044715 * pre**3)))
    else:
        raise ValueError(f"unknown activation {activation!r}")
    output = np.matmul(hidden, W2) + b2
    return output
