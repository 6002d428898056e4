"""Backward pass of scaled dot-product attention (NumPy).

Shape legend:
    ...  any number of leading axes, the same for dout, q, k and v: none, (B,), (B, H), ...
    T_q  query length
    T_k  key (and value) length
    d_k  query/key size
    d_v  value size

The forward pass (the numpy/attention kata):

    S   = q k^T / sqrt(d_k)                  (..., T_q, T_k)
    S   = S with hidden keys set to -inf     (mask False = hidden)
    P   = softmax(S) over the keys           (..., T_q, T_k); a query with no visible key: P row = 0
    out = P v                                (..., T_q, d_v)

Implement attention_backward(dout, q, k, v, mask=None): given dout = dL/dout, return the
gradients (dq, dk, dv) of the loss L. Recompute what you need (S, P) from q, k, v and mask:
nothing from the forward pass is handed to you.

Arguments:
    dout  (..., T_q, d_v) float64 or float32, the gradient of the loss with respect to out
    q     (..., T_q, d_k) same dtype
    k     (..., T_k, d_k) same dtype
    v     (..., T_k, d_v) same dtype
    mask  None, or a bool array broadcastable to (..., T_q, T_k), for example (B, 1, 1, T_k)
          for padding or (T_q, T_k) for a look-ahead mask.
          True = this query may attend to this key; False = hidden.
Returns (dq, dk, dv):
    dq  (..., T_q, d_k)  q's shape
    dk  (..., T_k, d_k)  k's shape
    dv  (..., T_k, d_v)  v's shape
    all in q's dtype (float32 in gives float32 out).
A hidden key receives no gradient through the query that cannot see it. A query with no
visible key at all has a zero output, so it gets dq = 0 and adds nothing to dk and dv (no NaN).

Rules: do not modify the inputs. Off limits: torch, jax, autograd (derive the gradient yourself).
"""

import numpy as np


def attention_backward(dout: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray,
                       mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    raise NotImplementedError("write the body of attention_backward")
