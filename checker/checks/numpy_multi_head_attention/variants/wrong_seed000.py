# expect: your mask is inverted
"""Seed 000's multi-head attention as written: 4-D transpose, additive mask with 1 = hidden, np.sqrt."""
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


def split_heads(x, num_heads, depth):
    x = x.reshape(x.shape[0], x.shape[1], num_heads, depth)
    return x.transpose(0, 2, 1, 3)


def combine_heads(x):
    x = x.transpose(0, 2, 1, 3)
    d_model = x.shape[2] * x.shape[3]
    return x.reshape(x.shape[0], x.shape[1], d_model)


def multi_head_attention(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo):
    depth = d_model // num_heads
    assert d_model % num_heads == 0
    q_proj = np.matmul(q, Wq)
    k_proj = np.matmul(k, Wk)
    v_proj = np.matmul(v, Wv)
    q_heads = split_heads(q_proj, num_heads, depth)
    k_heads = split_heads(k_proj, num_heads, depth)
    v_heads = split_heads(v_proj, num_heads, depth)
    attention_output, attention_weights = scaled_dot_product_attention(q_heads, k_heads, v_heads, mask)
    output_combined = combine_heads(attention_output)
    output = np.matmul(output_combined, Wo)
    return output, attention_weights
