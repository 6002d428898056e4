# expect: the axis a reduction, softmax, cumsum or concatenation runs over
"""Both statistics over the whole array at once (no axis given): one mean and one variance for every vector."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mu = np.mean(x, keepdims=True)
    sigma2 = np.mean(np.square(x - mu), keepdims=True)
    return gamma * ((x - mu) / np.sqrt(sigma2 + epsilon)) + beta
