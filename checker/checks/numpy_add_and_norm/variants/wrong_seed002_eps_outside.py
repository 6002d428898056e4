# expect: the paper walkthrough's LayerNorm
"""Seed 002's LayerNorm.forward as a function: (x - mean) / (std + eps), epsilon outside the square root."""
import numpy as np


def layer_norm(x, gamma, beta, epsilon=1e-6):
    mean = x.mean(axis=-1, keepdims=True)
    std = x.std(axis=-1, keepdims=True)
    return gamma * (x - mean) / (std + epsilon) + beta


def add_and_norm(x, sublayer_output, gamma, beta):
    return layer_norm(x + sublayer_output, gamma, beta)
