"""Flattens the leading axes and loops over them with 2-D arrays: slow but correct."""
import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    *lead, T_q, d_k = q.shape
    T_k, d_v = v.shape[-2:]
    visible = np.ones((*lead, T_q, T_k), dtype=bool) if mask is None else np.broadcast_to(mask, (*lead, T_q, T_k))
    qs, ks, vs = q.reshape(-1, T_q, d_k), k.reshape(-1, T_k, d_k), v.reshape(-1, T_k, d_v)
    ms = visible.reshape(-1, T_q, T_k)
    outs, weights = [], []
    for i in range(qs.shape[0]):
        w = np.zeros((T_q, T_k), dtype=q.dtype)
        s = qs[i] @ ks[i].T / math.sqrt(d_k)
        for r in range(T_q):
            keys = ms[i, r]
            if keys.any():
                w[r, keys] = softmax(s[r, keys])
        weights.append(w)
        outs.append(w @ vs[i])
    return np.stack(outs).reshape(*lead, T_q, d_v), np.stack(weights).reshape(*lead, T_q, T_k)
