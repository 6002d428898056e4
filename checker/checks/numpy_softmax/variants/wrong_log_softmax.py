# expect: log-softmax
"""Returns log-softmax, the habit from writing a cross-entropy."""

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x - max) / sum(exp(x - max)) along `axis`; same shape and dtype as x."""
    # 1) subtract each slice's own max: softmax does not change, and the largest exponent is exp(0) = 1
    x_max = np.max(x, axis=axis, keepdims=True)  # x.shape with `axis` kept at size 1, so it broadcasts back
    shifted = x - x_max
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))  # x.shape / (x.shape with `axis` of size 1)
