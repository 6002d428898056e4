# expect: Annotated Transformer
"""The Annotated Transformer's LayerNorm ported to NumPy: a_2 * (x - mean) / (std + eps) + b_2 with torch's unbiased std."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = x.mean(-1, keepdims=True)
    std = x.std(-1, keepdims=True, ddof=1)
    return gamma * (x - mean) / (std + epsilon) + beta
