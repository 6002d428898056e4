# expect: an argument replaced by a value written into the code
"""Takes `axis` but always normalises over the last axis."""
import numpy as np


def softmax(x, axis=-1):
    shifted = x - x.max(-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(-1, keepdims=True)
