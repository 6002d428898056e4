"""Scaled dot-product attention (NumPy).

Shape legend:
    ...  any number of leading axes, the same for q, k and v: none, (B,), (B, H), ...
    T_q  query length
    T_k  key (and value) length
    d_k  query/key size
    d_v  value size

Implement scaled_dot_product_attention(q, k, v, mask=None):

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V

Arguments:
    q     (..., T_q, d_k) np.ndarray, float64 or float32
    k     (..., T_k, d_k) same dtype
    v     (..., T_k, d_v) same dtype
    mask  None, or a bool array broadcastable to (..., T_q, T_k), for example (B, 1, 1, T_k)
          for padding or (T_q, T_k) for a look-ahead mask.
          True = this query may attend to this key; False = hidden.
Returns (output, attention_weights):
    output             (..., T_q, d_v), same dtype as q
    attention_weights  (..., T_q, T_k), same dtype as q; each row sums to 1 over the visible keys,
                       hidden keys get exactly 0.
A query with no visible key at all gets all-zero weights and an all-zero output.

Rules: keep the dtype (float32 in, float32 out); do not modify the inputs.
Off limits: torch (do not import it), scipy.special.softmax: write softmax yourself below
(or copy yours from the numpy/softmax kata).
"""

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along axis (a helper for scaled_dot_product_attention)."""
    raise NotImplementedError("write the body of softmax (or copy yours from the numpy/softmax kata)")


def scaled_dot_product_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                                 mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    raise NotImplementedError("write the body of scaled_dot_product_attention")
