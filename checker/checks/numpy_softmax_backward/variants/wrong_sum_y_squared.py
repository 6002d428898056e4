# expect: one variable read where another belongs
"""Subtracts sum(y * y), a slip for sum(dy * y)."""

import numpy as np


def softmax_backward(dy: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """dx = y * (dy - sum(dy * y, axis)) for y = softmax(x, axis); y's shape and dtype."""
    # 1) the Jacobian is diag(y) - y y^T; applied to dy, its y y^T part needs one number per slice:
    #    <dy, y>, the slice's dy averaged with softmax's own weights
    dot = np.sum(y * y, axis=axis, keepdims=True)  # y.shape with `axis` kept at size 1
    # 2) the diag(y) part minus that: dx_i = y_i dy_i - y_i <dy, y>
    return y * (dy - dot)  # y.shape
