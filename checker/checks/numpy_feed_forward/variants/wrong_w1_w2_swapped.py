# expect: you use W2 in the first layer and W1 in the second
"""Uses the weights in the wrong order."""
import numpy as np


def feed_forward_network(x, W1, b1, W2, b2, activation="relu"):
    h = x @ W2 + b1
    if activation == "relu":
        h = np.maximum(h, 0)
    elif activation == "gelu":
        h = 0.5 * h * (1 + np.tanh(0.7978845608028654 * (h + 0.044715 * h**3)))
    else:
        raise ValueError(activation)
    return h @ W1 + b2
