# expect: your dW and db are MEANS over the N rows
"""Averages dW and db over the rows, as if the loss were a mean."""
import numpy as np


def linear_backward(dout, x, W):
    x2 = x.reshape(-1, W.shape[0])
    d2 = dout.reshape(-1, W.shape[1])
    return dout @ W.T, x2.T @ d2 / len(x2), d2.mean(axis=0)
