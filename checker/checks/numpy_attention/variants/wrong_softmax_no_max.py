# expect: subtract each row's own max
"""A softmax without the max subtraction."""

import math

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along axis."""
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)  # x.shape


def scaled_dot_product_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                                 mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """softmax(q k^T / sqrt(d_k)) v with an optional bool mask; returns (output, attention_weights)."""
    d_k = q.shape[-1]
    # 1) similarity of every query with every key; swap only the LAST two axes of k, whatever its rank.
    #    math.sqrt gives a Python float, which keeps float32 (np.sqrt(d_k) is a float64 scalar and would not).
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k)  # (..., T_q, d_k) x (..., d_k, T_k) -> (..., T_q, T_k)
    # 2) hidden keys get -inf, so softmax gives them exactly zero weight
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)  # (..., T_q, T_k)
    # 3) normalise over the keys (the last axis); a row of only -inf gives NaN (-inf - -inf): make it zero
    with np.errstate(invalid="ignore"):
        weights = softmax(scores, axis=-1)  # (..., T_q, T_k)
    if mask is not None:
        weights = np.where(mask, weights, 0.0)  # (..., T_q, T_k)
    # 4) weighted sum of the values
    return weights @ v, weights  # (..., T_q, T_k) x (..., T_k, d_v) -> (..., T_q, d_v)
