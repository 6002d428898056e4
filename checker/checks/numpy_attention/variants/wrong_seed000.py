# expect: k.transpose(0, 1, 3, 2) needs exactly 4 axes
"""Seed 000's scaled_dot_product_attention as written (4-D only, 1 = hidden, np.sqrt)."""
import numpy as np


def softmax(x, axis=-1):
    x = x - np.max(x, axis=axis, keepdims=True)
    e_x = np.exp(x)
    return e_x / np.sum(e_x, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    matmul_qk = np.matmul(q, k.transpose(0, 1, 3, 2))
    d_k = q.shape[-1]
    scaled_attention_logits = matmul_qk / np.sqrt(d_k)
    if mask is not None:
        scaled_attention_logits = scaled_attention_logits + (mask * -1e9)
    attention_weights = softmax(scaled_attention_logits, axis=-1)
    output = np.matmul(attention_weights, v)
    return output, attention_weights
