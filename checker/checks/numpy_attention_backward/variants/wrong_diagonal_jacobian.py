# expect: the diagonal of softmax's Jacobian only
"""Uses softmax'(x) = p (1 - p) elementwise, as if each weight depended on its own score only."""
import math

import numpy as np


def attention_backward(dout, q, k, v, mask=None):
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        P = e / e.sum(axis=-1, keepdims=True)
    if mask is not None:
        P = np.where(mask, P, 0.0)
    dv = np.swapaxes(P, -1, -2) @ dout
    dS = P * (1 - P) * (dout @ np.swapaxes(v, -1, -2))
    return dS @ k * scale, np.swapaxes(dS, -1, -2) @ q * scale, dv
