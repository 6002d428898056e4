"""Seed 000's softmax, exactly as written there."""
import numpy as np


def softmax(x, axis=-1):
    # 提高数值稳定性
    x = x - np.max(x, axis=axis, keepdims=True)
    e_x = np.exp(x)
    return e_x / np.sum(e_x, axis=axis, keepdims=True)
