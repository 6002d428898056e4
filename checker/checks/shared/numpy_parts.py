"""Plain NumPy versions of the parts that the NumPy checks build their named mistakes from.

A composite kata's mistakes rewire correct parts (a residual from the wrong tensor, a mask
swapped), so the parts themselves are written once, here. They run in the parent, never on the
user's behalf.
"""

import math

import numpy as np


def softmax(x, axis=-1):
    """Stable softmax; a row of -inf comes out NaN, which callers that mask replace by zeros."""
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = x.mean(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + epsilon) + beta


def multi_head_attention(q, kv, mask, H, Wq, Wk, Wv, Wo):
    """(B, T_q, D) queries attend over (B, T_k, D); mask True = may attend; a blind query gives zeros."""

    def heads(a):  # (B, T, D) -> (B, H, T, depth)
        return a.reshape(a.shape[0], a.shape[1], H, -1).transpose(0, 2, 1, 3)

    Q, K, V = heads(q @ Wq), heads(kv @ Wk), heads(kv @ Wv)
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])  # (B, H, T_q, T_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = softmax(scores)
    if mask is not None:
        w = np.where(mask, w, 0.0)
    out = (w @ V).transpose(0, 2, 1, 3)  # (B, T_q, H, depth)
    return out.reshape(out.shape[0], out.shape[1], -1) @ Wo


def feed_forward(x, W1, b1, W2, b2):
    return np.maximum(x @ W1 + b1, 0) @ W2 + b2
