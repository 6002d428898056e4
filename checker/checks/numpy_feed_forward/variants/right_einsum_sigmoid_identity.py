"""einsum, a table of activations, and GELU through 0.5 * (1 + tanh(z)) = sigmoid(2z)."""
import math

import numpy as np


def _relu(h):
    return np.where(h > 0, h, 0)


def _gelu(h):
    z = math.sqrt(2 / math.pi) * (h + 0.044715 * h * h * h)
    return h / (1 + np.exp(-2 * z))


ACTIVATIONS = {"relu": _relu, "gelu": _gelu}


def feed_forward_network(x, W1, b1, W2, b2, activation="relu"):
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}")
    hidden = ACTIVATIONS[activation](np.einsum("...d,df->...f", x, W1) + b1)
    return np.einsum("...f,fd->...d", hidden, W2) + b2
