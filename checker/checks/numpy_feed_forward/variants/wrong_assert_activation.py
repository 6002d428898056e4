# expect: where the contract says it raises ValueError
"""Seed 000's feed_forward_network, the activation checked with an assert."""
import math

import numpy as np


def feed_forward_network(x, W1, b1, W2, b2, activation="relu"):
    assert activation in ("relu", "gelu"), activation
    pre = np.matmul(x, W1) + b1
    if activation == "relu":
        hidden = np.maximum(0, pre)
    else:
        hidden = 0.5 * pre * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (pre + 0.044715 * pre**3)))
    return np.matmul(hidden, W2) + b2
