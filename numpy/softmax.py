"""Numerically stable softmax (NumPy).

Shape legend:
    x.shape  any shape, for example attention scores (B, T_q, T_k); softmax runs along one axis of it

Implement softmax(x, axis=-1):

    softmax(x)_i = exp(x_i) / sum_j exp(x_j)        (i and j run along `axis`)

Arguments:
    x     np.ndarray of any shape, float64 or float32
    axis  int, the axis to normalise over (negative counts from the end); default -1, the last
Returns:
    np.ndarray with x's shape and dtype: every slice along `axis` lies in [0, 1] and sums to 1.

Rules: the result must stay finite for logits as large as 1e4 in size (exp(1000) is inf);
keep the dtype (float32 in, float32 out); do not modify x.
Off limits: torch (do not import it), scipy.special.softmax.
"""

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    raise NotImplementedError("write the body of softmax")
