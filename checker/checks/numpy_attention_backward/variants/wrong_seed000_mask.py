# expect: the polarity of a mask, or which triangle of it
"""Seed 000's convention, mask * -1e9 with 1 = hidden: the opposite of this catalogue's."""
import math

import numpy as np


def attention_backward(dout, q, k, v, mask=None):
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    with np.errstate(invalid="ignore"):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        P = e / e.sum(axis=-1, keepdims=True)
    if mask is not None:
        P = np.where(mask, 0.0, P)
    dv = np.swapaxes(P, -1, -2) @ dout
    dP = dout @ np.swapaxes(v, -1, -2)
    dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))
    return dS @ k * scale, np.swapaxes(dS, -1, -2) @ q * scale, dv
