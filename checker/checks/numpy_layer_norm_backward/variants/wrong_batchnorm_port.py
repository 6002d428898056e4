# expect: the axis a reduction, softmax, cumsum or concatenation runs over
"""The cs231n batch-norm backward formula pasted in: its sums run over axis 0, the batch."""
import numpy as np


def layer_norm_backward(dy, x, gamma, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - mean) * rstd
    lead = tuple(range(x.ndim - 1))
    dxhat = dy * gamma
    N = x.shape[0]
    dx = rstd / N * (N * dxhat - dxhat.sum(axis=0, keepdims=True) - x_hat * (dxhat * x_hat).sum(axis=0, keepdims=True))
    return dx, (dy * x_hat).sum(axis=lead), dy.sum(axis=lead)
