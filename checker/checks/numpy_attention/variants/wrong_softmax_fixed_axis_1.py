# expect: the axis a reduction, softmax, cumsum or concatenation runs over
"""softmax(axis=1): the keys axis for a (T_q, T_k) input, the queries or the heads once a batch axis is in front."""
import math
import numpy as np
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
def scaled_dot_product_attention(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = np.nan_to_num(softmax(s, axis=1))
    return w @ v, w
