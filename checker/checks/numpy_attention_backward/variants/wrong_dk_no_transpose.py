# expect: your dk equals dS q
"""dk = dS q: forgets that S = q kᵀ puts k on the other side (runs only when T_q = T_k)."""
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
    dP = dout @ np.swapaxes(v, -1, -2)
    dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))
    return dS @ k * scale, dS @ q * scale, dv
