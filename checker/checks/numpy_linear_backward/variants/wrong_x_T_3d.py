# expect: x.T on a 3-D array reverses ALL its axes
"""The 2-D formula dW = x.T @ dout applied to (B, T, D_in) arrays."""
import numpy as np


def linear_backward(dout, x, W):
    dx = dout @ W.T
    dW = x.T @ dout
    db = dout.sum(axis=0)
    return dx, dW, db
