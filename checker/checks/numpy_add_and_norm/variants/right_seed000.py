"""Seed 000's layer_norm and add_and_norm, verbatim (np.var's default ddof=0 is the biased variance)."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    normalized_x = (x - mean) / np.sqrt(var + epsilon)
    output = gamma * normalized_x + beta
    return output


def add_and_norm(x, sublayer_output, gamma, beta):
    added = x + sublayer_output
    normed = layer_norm(added, gamma, beta)
    return normed
