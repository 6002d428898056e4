# expect: exact erf form
"""The exact GELU through math.erf (what nn.GELU() computes by default), not the tanh approximation."""
import math

import numpy as np

_erf = np.vectorize(math.erf)


def feed_forward_network(x, W1, b1, W2, b2, activation="relu"):
    h = x @ W1 + b1
    if activation == "relu":
        h = np.maximum(h, 0)
    elif activation == "gelu":
        h = (0.5 * h * (1 + _erf(h / math.sqrt(2)))).astype(x.dtype)
    else:
        raise ValueError(activation)
    return h @ W2 + b2
