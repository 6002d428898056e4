# expect: without its last axis
"""FlashAttention-2's backward trick, D = rowsum(dout * out) in place of rowsum(dP * P), written without keepdims: (..., T_q)
cannot broadcast against (..., T_q, T_k)."""
import math

import numpy as np


def attention_backward(dout: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray,
                       mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients (dq, dk, dv) of softmax(q kᵀ / √d_k, masked) v, given dout = dL/dout."""
    scale = 1.0 / math.sqrt(q.shape[-1])  # a Python float: keeps float32
    # 1) recompute the forward weights P; a row with no visible key is 0 (not NaN)
    scores = q @ np.swapaxes(k, -1, -2) * scale  # (..., T_q, d_k) x (..., d_k, T_k) -> (..., T_q, T_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)  # (..., T_q, T_k)
    with np.errstate(invalid="ignore"):
        e = np.exp(scores - np.max(scores, axis=-1, keepdims=True))  # (..., T_q, T_k)
        P = e / np.sum(e, axis=-1, keepdims=True)  # (..., T_q, T_k)
    if mask is not None:
        P = np.where(mask, P, 0.0)  # (..., T_q, T_k)
    # 2) out = P v: the gradient flows to v through Pᵀ and to P through vᵀ
    dv = np.swapaxes(P, -1, -2) @ dout  # (..., T_k, T_q) x (..., T_q, d_v) -> (..., T_k, d_v)
    dP = dout @ np.swapaxes(v, -1, -2)  # (..., T_q, d_v) x (..., d_v, T_k) -> (..., T_q, T_k)
    # 3) softmax's Jacobian (diag(P) − P Pᵀ per row) applied to dP; hidden keys have P = 0, so dS = 0 there
    out = P @ v
    D = np.sum(dout * out, axis=-1)  # FlashAttention-2's row sum: rowsum(dO * O) equals rowsum(dP * P)
    dS = P * (dP - D)
    # 4) S = q kᵀ · scale
    dq = dS @ k * scale  # (..., T_q, T_k) x (..., T_k, d_k) -> (..., T_q, d_k)
    dk = np.swapaxes(dS, -1, -2) @ q * scale  # (..., T_k, T_q) x (..., T_q, d_k) -> (..., T_k, d_k)
    return dq, dk, dv
