"""Position-wise feed-forward network (NumPy), with a ReLU or a GELU.

Shape legend:
    ...   any leading axes: (B, T) for a batch of sequences, (N,) for a batch of vectors
    D     d_model
    F     d_ff, the hidden size (usually 4 * d_model)

Implement feed_forward_network(x, W1, b1, W2, b2, activation="relu"):

    FFN(x) = act(x @ W1 + b1) @ W2 + b2

applied to every position independently. The weights are stored (in, out), as in the NumPy tutorial:
multiply x @ W1, not x @ W1.T (that is nn.Linear's (out, in) layout).

    act = "relu":  max(0, h)
    act = "gelu":  the tanh approximation
                   0.5 * h * (1 + tanh(sqrt(2 / pi) * (h + 0.044715 * h**3)))
    anything else: raise ValueError

Arguments:
    x           (..., D) float array, rank 2 (N, D) or rank 3 (B, T, D)
    W1          (D, F) first layer weights
    b1          (F,)   first layer bias
    W2          (F, D) second layer weights
    b2          (D,)   second layer bias
    activation  "relu" (default) or "gelu"
Returns:
    (..., D), the shape and the dtype of x (float32 in gives float32 out).

Rules: NumPy only; the file must not import torch (this kata is the NumPy track).
Do not modify the inputs.
"""

import math

import numpy as np


def feed_forward_network(x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray,
                         activation: str = "relu") -> np.ndarray:
    raise NotImplementedError("write the body of feed_forward_network")
