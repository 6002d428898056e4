# followup: float64
"""Accumulates dW and db in np.zeros(...) without a dtype: float64, whatever the inputs are."""
import numpy as np


def linear_backward(dout, x, W):
    dx = dout @ W.T
    dW = np.zeros(W.shape)
    db = np.zeros(W.shape[1])
    for x_row, d_row in zip(x.reshape(-1, W.shape[0]), dout.reshape(-1, W.shape[1])):
        dW += np.outer(x_row, d_row)
        db += d_row
    return dx, dW, db
