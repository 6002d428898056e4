"""Flattens the leading axes and loops over queries with softmax's explicit Jacobian diag(p) - p pᵀ: slow but clear."""
import math

import numpy as np


def attention_backward(dout, q, k, v, mask=None):
    *lead, T_q, d_k = q.shape
    T_k, d_v = v.shape[-2:]
    visible = np.ones((*lead, T_q, T_k), dtype=bool) if mask is None else np.broadcast_to(mask, (*lead, T_q, T_k))
    qs, ks, vs = q.reshape(-1, T_q, d_k), k.reshape(-1, T_k, d_k), v.reshape(-1, T_k, d_v)
    dos, ms = dout.reshape(-1, T_q, d_v), visible.reshape(-1, T_q, T_k)
    dq, dk, dv = np.zeros_like(qs), np.zeros_like(ks), np.zeros_like(vs)
    for n in range(qs.shape[0]):
        for i in range(T_q):
            seen = ms[n, i]
            if not seen.any():
                continue  # zero output: no gradient anywhere
            s = ks[n][seen] @ qs[n, i] / math.sqrt(d_k)
            p = np.exp(s - s.max())
            p /= p.sum()
            dv[n][seen] += np.outer(p, dos[n, i])
            jac = np.diag(p) - np.outer(p, p)
            ds = jac @ (vs[n][seen] @ dos[n, i])
            dq[n, i] = ds @ ks[n][seen] / math.sqrt(d_k)
            dk[n][seen] += np.outer(ds, qs[n, i]) / math.sqrt(d_k)
    return dq.reshape(q.shape), dk.reshape(k.shape), dv.reshape(v.shape)
