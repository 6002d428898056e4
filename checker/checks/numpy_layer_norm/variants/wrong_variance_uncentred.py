# expect: a term dropped from a sum, or a factor from a product
"""The variance is mean(x²), not centred, while the numerator subtracts the mean."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.mean(np.square(x), axis=-1, keepdims=True)
    x_hat = (x - mean) / np.sqrt(var + epsilon)
    return gamma * x_hat + beta
