# expect: a term dropped from a sum, or a factor from a product
"""0.5·(1 + tanh(...)): the leading x forgotten."""

import math

import numpy as np

# Plain Python floats: a NumPy float64 scalar (np.sqrt(2 / np.pi)) would turn float32 arrays into float64.
GELU_SCALE = math.sqrt(2.0 / math.pi)
GELU_CUBIC = 0.044715


def feed_forward_network(x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray,
                         activation: str = "relu") -> np.ndarray:
    """act(x @ W1 + b1) @ W2 + b2 for every position; activation is "relu" or "gelu" (tanh form)."""
    # 0) choose the activation before any work, so a wrong name fails fast
    if activation == "relu":
        act = lambda h: np.maximum(h, 0)  # noqa: E731
    elif activation == "gelu":
        act = lambda h: 0.5 * (1.0 + np.tanh(GELU_SCALE * (h + GELU_CUBIC * h**3)))  # noqa: E731
    else:
        raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
    # 1) expand to d_ff, bias, then the nonlinearity
    hidden = act(x @ W1 + b1)  # (..., D) x (D, F) -> (..., F)
    # 2) project back to d_model; no activation after the second layer
    return hidden @ W2 + b2  # (..., F) x (F, D) -> (..., D)
