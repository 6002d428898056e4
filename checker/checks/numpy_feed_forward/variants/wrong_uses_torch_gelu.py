# expect: which is off limits in this kata
"""Borrows torch's tanh GELU: correct values, but this is the NumPy track."""
import numpy as np
import torch


def feed_forward_network(x, W1, b1, W2, b2, activation="relu"):
    h = x @ W1 + b1
    if activation == "relu":
        h = np.maximum(h, 0)
    elif activation == "gelu":
        h = torch.nn.functional.gelu(torch.from_numpy(h), approximate="tanh").numpy()
    else:
        raise ValueError(activation)
    return h @ W2 + b2
