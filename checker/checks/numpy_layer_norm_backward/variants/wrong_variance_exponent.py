# expect: dx: 80 of 80 elements differ
"""dvar written with the forward pass's exponent, (var + eps) ** -0.5 instead of -1.5: no single rewrite of the reference
expresses it, and no named mistake may be said."""
import numpy as np


def layer_norm_backward(dy, x, gamma, eps=1e-5):
    D = x.shape[-1]
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = (xc ** 2).mean(axis=-1, keepdims=True)
    lead = tuple(range(x.ndim - 1))
    x_hat = xc / np.sqrt(var + eps)
    dgamma = (dy * x_hat).sum(axis=lead)
    dbeta = dy.sum(axis=lead)
    dxhat = dy * gamma
    # dvar = sum(dxhat * xc) * -1/2 * (var + eps)^(-3/2), written with the forward's exponent
    dvar = (dxhat * xc).sum(axis=-1, keepdims=True) * -0.5 * (var + eps) ** -0.5
    dmu = -(dxhat / np.sqrt(var + eps)).sum(axis=-1, keepdims=True) - 2.0 * dvar * xc.mean(axis=-1, keepdims=True)
    dx = dxhat / np.sqrt(var + eps) + dvar * 2.0 * xc / D + dmu / D
    return dx, dgamma, dbeta
