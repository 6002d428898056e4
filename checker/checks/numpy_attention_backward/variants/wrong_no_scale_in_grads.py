# expect: a term dropped from a sum, or a factor from a product
"""Scales the scores in the recomputed forward pass, but forgets the scale in dq and dk."""
import math

import numpy as np


def attention_backward(dout, q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        P = e / e.sum(axis=-1, keepdims=True)
    if mask is not None:
        P = np.where(mask, P, 0.0)
    dv = np.swapaxes(P, -1, -2) @ dout
    dP = dout @ np.swapaxes(v, -1, -2)
    dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))
    return dS @ k, np.swapaxes(dS, -1, -2) @ q, dv
