"""Python loops and lists, converted to bool arrays at the end."""
import numpy as np


def make_pad_mask(tokens, pad_id=0):
    rows = [[[[tok != pad_id for tok in row]]] for row in tokens.tolist()]
    return np.array(rows, dtype=bool)


def make_causal_mask(T):
    return np.array([[j <= i for j in range(T)] for i in range(T)], dtype=bool)
