"""The staged computational graph (cs231n style): dx_hat, then dvar, then dmean, then dx; 2-D via reshape."""
import numpy as np


def layer_norm_backward(dy, x, gamma, eps=1e-5):
    shape, D = x.shape, x.shape[-1]
    dy2, x2 = dy.reshape(-1, D), x.reshape(-1, D)
    mu = x2.mean(axis=1, keepdims=True)
    xmu = x2 - mu
    var = (xmu**2).mean(axis=1, keepdims=True)
    ivar = 1.0 / np.sqrt(var + eps)
    x_hat = xmu * ivar
    dgamma = (dy2 * x_hat).sum(axis=0)
    dbeta = dy2.sum(axis=0)
    dxhat = dy2 * gamma
    dvar = (dxhat * xmu).sum(axis=1, keepdims=True) * -0.5 * ivar**3
    dmu = -(dxhat * ivar).sum(axis=1, keepdims=True) + dvar * (-2.0 * xmu).mean(axis=1, keepdims=True)
    dx = dxhat * ivar + dvar * 2.0 * xmu / D + dmu / D
    return dx.reshape(shape), dgamma, dbeta
