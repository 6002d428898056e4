# expect: your gradients ignore the mask
"""Recomputes the weights without the mask: the hidden keys get gradient."""
import math

import numpy as np


def attention_backward(dout, q, k, v, mask=None):
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = q @ np.swapaxes(k, -1, -2) * scale
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    P = e / e.sum(axis=-1, keepdims=True)
    dv = np.swapaxes(P, -1, -2) @ dout
    dP = dout @ np.swapaxes(v, -1, -2)
    dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))
    return dS @ k * scale, np.swapaxes(dS, -1, -2) @ q * scale, dv
