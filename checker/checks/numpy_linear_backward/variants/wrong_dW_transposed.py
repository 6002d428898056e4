# expect: your dW equals dout^T x
"""dW = dout^T x: the operands of the outer product in the wrong order."""
import numpy as np


def linear_backward(dout, x, W):
    x2 = x.reshape(-1, x.shape[-1])
    d2 = dout.reshape(-1, dout.shape[-1])
    return dout @ W.T, d2.T @ x2, d2.sum(axis=0)
