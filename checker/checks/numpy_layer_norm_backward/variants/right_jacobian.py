"""Builds each vector's full (D, D) Jacobian of x_hat and contracts it with einsum: slow but clear."""
import numpy as np


def layer_norm_backward(dy, x, gamma, eps=1e-5):
    D = x.shape[-1]
    mean = np.mean(x, axis=-1)[..., None]
    rstd = (np.var(x, axis=-1) + eps)[..., None, None] ** -0.5
    x_hat = (x - mean) * rstd[..., 0]
    # d x_hat_i / d x_j = rstd * (delta_ij - 1/D - x_hat_i x_hat_j / D)
    eye = np.eye(D, dtype=x.dtype)
    jac = rstd * (eye - 1.0 / D - np.einsum("...i,...j->...ij", x_hat, x_hat) / D)
    dx = np.einsum("...i,...ij->...j", dy * gamma, jac)
    dgamma = np.einsum("nd,nd->d", dy.reshape(-1, D), x_hat.reshape(-1, D))
    dbeta = np.einsum("nd->d", dy.reshape(-1, D))
    return dx, dgamma, dbeta
