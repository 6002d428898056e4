# expect: nn.LayerNorm's
"""Takes PyTorch's default epsilon, 1e-5."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + epsilon) + beta
