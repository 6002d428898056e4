# followup: float64
"""Right values, but np.sqrt(d_k) is a float64 NumPy scalar: float32 in, float64 out (NumPy 2)."""
import numpy as np


def attention_backward(dout, q, k, v, mask=None):
    d_k = q.shape[-1]
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)
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
    return dS @ k / np.sqrt(d_k), np.swapaxes(dS, -1, -2) @ q / np.sqrt(d_k), dv
