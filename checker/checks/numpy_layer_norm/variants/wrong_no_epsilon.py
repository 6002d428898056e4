# expect: has variance 0 and came out
"""Divides by the bare standard deviation: a constant row gives 0 / 0."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = x.mean(axis=-1, keepdims=True)
    return gamma * (x - mean) / x.std(axis=-1, keepdims=True) + beta
