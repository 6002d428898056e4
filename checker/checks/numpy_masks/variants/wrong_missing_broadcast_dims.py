# expect: add the head and query axes
"""Returns the (B, T) comparison without the broadcast axes."""
import numpy as np


def make_pad_mask(tokens, pad_id=0):
    return tokens != pad_id


def make_causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool))
