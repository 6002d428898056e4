# expect: pass axis=axis to np.sum as well
"""The max follows axis, the sum is hard-coded to the last axis."""

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x - max) / sum(exp(x - max)) along `axis`; same shape and dtype as x."""
    # 1) subtract each slice's own max: softmax does not change, and the largest exponent is exp(0) = 1
    x_max = np.max(x, axis=axis, keepdims=True)  # x.shape with `axis` kept at size 1, so it broadcasts back
    e = np.exp(x - x_max)  # x.shape, every entry in (0, 1]
    # 2) normalise along the same axis
    return e / np.sum(e, axis=-1, keepdims=True)  # x.shape / (x.shape with `axis` of size 1)
