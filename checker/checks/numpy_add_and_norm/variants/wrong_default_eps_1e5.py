# expect: an argument replaced by a value written into the code
"""Takes PyTorch's default epsilon, 1e-5."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + epsilon) + beta


def add_and_norm(x, sublayer_output, gamma, beta):
    return layer_norm(x + sublayer_output, gamma, beta)
