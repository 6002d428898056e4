"""Through log-sum-exp: softmax = exp(x - logsumexp(x)), with the axis moved last and back."""
import numpy as np


def softmax(x, axis=-1):
    z = np.moveaxis(x, axis, -1)
    m = z.max(axis=-1)[..., None]
    lse = m + np.log(np.exp(z - m).sum(axis=-1))[..., None]
    return np.moveaxis(np.exp(z - lse), -1, axis)
