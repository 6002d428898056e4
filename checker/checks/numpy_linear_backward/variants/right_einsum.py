"""einsum on the rows flattened to 2-D (NumPy's einsum cannot sum an ellipsis away)."""
import numpy as np


def linear_backward(dout, x, W):
    x2 = x.reshape(-1, x.shape[-1])
    d2 = dout.reshape(-1, dout.shape[-1])
    dx = np.einsum("...o,io->...i", dout, W)
    dW = np.einsum("ni,no->io", x2, d2)
    db = np.einsum("no->o", d2)
    return dx, dW, db
