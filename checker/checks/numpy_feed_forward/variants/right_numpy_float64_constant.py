# followup: float64
"""np.sqrt(2 / np.pi) is a NumPy float64 scalar: with NumPy 2 it turns a float32 GELU into float64."""
import numpy as np


def feed_forward_network(x, W1, b1, W2, b2, activation="relu"):
    h = x @ W1 + b1
    if activation == "relu":
        h = np.maximum(h, 0)
    elif activation == "gelu":
        h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * np.power(h, 3))))
    else:
        raise ValueError(activation)
    return h @ W2 + b2
