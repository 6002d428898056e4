# expect: (a.T reverses every axis)
"""Seed 002's 2-D habits: np.dot and .T, right for (T, d) arrays only."""
import math

import numpy as np


def attention_backward(dout, q, k, v, mask=None):
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = np.dot(q, k.T) * scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        P = e / e.sum(axis=-1, keepdims=True)
    if mask is not None:
        P = np.where(mask, P, 0.0)
    dv = np.dot(P.T, dout)
    dP = np.dot(dout, v.T)
    dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))
    return np.dot(dS, k) * scale, np.dot(dS.T, q) * scale, dv
