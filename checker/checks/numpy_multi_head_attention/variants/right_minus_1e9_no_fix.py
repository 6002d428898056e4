# followup: turns such a row uniform
"""Seed 002's loop over heads with np.where(mask, scores, -1e9) (the Annotated Transformer's -1e9): a query that sees no key turns uniform."""
import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    weights = softmax(scores, axis=-1)
    return weights @ v, weights



def split_heads(x, num_heads, depth):
    x = x.reshape(x.shape[0], x.shape[1], num_heads, depth)
    return x.transpose(0, 2, 1, 3)



def combine_heads(x):
    x = x.transpose(0, 2, 1, 3)
    return x.reshape(x.shape[0], x.shape[1], x.shape[2] * x.shape[3])


def multi_head_attention(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo):
    depth = d_model // num_heads
    outs, weights = [], []
    for h in range(num_heads):
        cols = slice(h * depth, (h + 1) * depth)
        head_mask = None if mask is None else np.broadcast_to(mask, (q.shape[0], num_heads, q.shape[1], k.shape[1]))[:, h]
        out, w = scaled_dot_product_attention(q @ Wq[:, cols], k @ Wk[:, cols], v @ Wv[:, cols], head_mask)
        outs.append(out)
        weights.append(w)
    return np.concatenate(outs, axis=-1) @ Wo, np.stack(weights, axis=1)
