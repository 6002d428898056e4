# expect: got (4, 3)
"""Returns (dW, dx, db), the order of the parameters in many frameworks."""

import numpy as np


def linear_backward(dout: np.ndarray, x: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dx, dW, db) for y = x @ W + b, given dout = dL/dy; the inputs' dtype."""
    D_in, D_out = W.shape
    # 1) dx: each row of x reaches y through W, so its gradient goes back through W^T
    dx = dout @ W.T  # (..., D_out) @ (D_out, D_in) -> (..., D_in)
    # 2) flatten every leading axis into N rows: every row used the same W and b
    N = x.size // D_in  # the product of the leading axes (1 when there are none)
    x2, dout2 = x.reshape(N, D_in), dout.reshape(N, D_out)  # (N, D_in), (N, D_out)
    # 3) dW and db sum the rows' contributions
    dW = x2.T @ dout2  # (D_in, N) @ (N, D_out) -> (D_in, D_out)
    db = dout2.sum(axis=0)  # (D_out,)
    return dW, dx, db
