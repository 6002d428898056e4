# expect: with x @ W.T
"""Seed 002's orientation, np.dot(x, W.T), where the contract (seed 000) is x @ W."""
import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        weights = softmax(scores, axis=-1)
    if mask is not None:
        weights = np.where(mask, weights, 0.0)
    return weights @ v, weights



def split_heads(x, num_heads, depth):
    x = x.reshape(x.shape[0], x.shape[1], num_heads, depth)
    return x.transpose(0, 2, 1, 3)



def combine_heads(x):
    x = x.transpose(0, 2, 1, 3)
    return x.reshape(x.shape[0], x.shape[1], x.shape[2] * x.shape[3])


def multi_head_attention(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo):
    depth = d_model // num_heads
    q_heads = split_heads(np.dot(q, Wq.T), num_heads, depth)
    k_heads = split_heads(np.dot(k, Wk.T), num_heads, depth)
    v_heads = split_heads(np.dot(v, Wv.T), num_heads, depth)
    out, weights = scaled_dot_product_attention(q_heads, k_heads, v_heads, mask)
    return np.dot(combine_heads(out), Wo.T), weights
