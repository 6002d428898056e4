"""FlashAttention's backward trick: rowsum(dP · P) = rowsum(dout · out); einsum; -1e9 then an explicit fix."""
import math

import numpy as np


def attention_backward(dout, q, k, v, mask=None):
    scale = 1.0 / math.sqrt(q.shape[-1])
    s = np.einsum("...qd,...kd->...qk", q, k) * scale
    if mask is not None:
        s = np.where(mask, s, -1e9)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    if mask is not None:
        p = np.where(mask, p, 0.0)  # also zeroes the rows of queries that see nothing
    out = np.einsum("...qk,...kd->...qd", p, v)
    D = np.einsum("...qd,...qd->...q", dout, out)[..., None]  # = rowsum(dP * P)
    dp = np.einsum("...qd,...kd->...qk", dout, v)
    ds = p * (dp - D)
    dq = np.einsum("...qk,...kd->...qd", ds, k) * scale
    dk = np.einsum("...qk,...qd->...kd", ds, q) * scale
    dv = np.einsum("...qk,...qd->...kd", p, dout)
    return dq, dk, dv
