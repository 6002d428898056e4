# expect: 15 of 15 elements differ
"""The cross-entropy shortcut, y - dy, taken for the softmax backward: it holds only when dy is the gradient of a
cross-entropy on a one-hot target, and softmax_backward is handed any dy."""
import numpy as np


def softmax_backward(dy, y, axis=-1):
    # softmax followed by cross-entropy: the gradient is the prediction minus the target
    return y - dy
