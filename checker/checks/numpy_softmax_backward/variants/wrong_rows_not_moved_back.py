# expect: in another order
"""The slices are moved to the last axis (np.moveaxis(..., axis, -1)) to work on rows, and the result is returned as
it is there: for axis=-1 it is right, for any other axis its axes come back in another order than y's."""
import numpy as np


def softmax_backward(dy, y, axis=-1):
    rows_dy = np.moveaxis(dy, axis, -1)
    rows_y = np.moveaxis(y, axis, -1)
    inner = (rows_dy * rows_y).sum(axis=-1)[..., None]
    return rows_y * (rows_dy - inner)
