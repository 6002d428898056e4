# expect: the residual is added after the norm of the sublayer only
"""Pre-LN muddle: x + layer_norm(sublayer_output), the residual stream never normalised."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + epsilon) + beta


def add_and_norm(x, sublayer_output, gamma, beta):
    return x + layer_norm(sublayer_output, gamma, beta)
