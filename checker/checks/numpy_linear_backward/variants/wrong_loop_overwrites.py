# expect: the LAST batch item only
"""Loops over the batch but assigns dW and db instead of accumulating them (= instead of +=)."""
import numpy as np


def linear_backward(dout, x, W):
    dx = dout @ W.T
    x3 = x.reshape(x.shape[0], -1, x.shape[-1])
    d3 = dout.reshape(dout.shape[0], -1, dout.shape[-1])
    for b in range(x3.shape[0]):
        dW = x3[b].T @ d3[b]
        db = d3[b].sum(axis=0)
    db = dout.reshape(-1, dout.shape[-1]).sum(axis=0)
    return dx, dW, db
