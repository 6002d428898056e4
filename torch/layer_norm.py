"""Layer normalization, from scratch.

Shape legend:
    ...  any leading axes: (B, T), (T,), (B, H, T), ...
    D    d_model, the size of the last axis, which is normalised

Implement LayerNorm:

    mean = x.mean over the last axis
    var  = mean of (x - mean)^2 over the last axis   (the BIASED variance: divide by D, not D - 1)
    y    = gamma * (x - mean) / sqrt(var + eps) + beta

__init__(d_model, eps=1e-5):
    gamma  nn.Parameter of shape (D,), initialised to ones
    beta   nn.Parameter of shape (D,), initialised to zeros
    (the checker loads weights into gamma and beta by these names)
forward(x):
    x        (..., D) float tensor
    returns  (..., D), same dtype as x; every vector along the last axis is normalised on its own

A constant vector (variance 0) must come out as beta, not NaN.

Rules: work in the dtype of the input; do not modify x.
Off limits: torch.nn.functional.layer_norm, torch.nn.LayerNorm.
"""

import torch
from torch import Tensor, nn


class LayerNorm(nn.Module):
    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        raise NotImplementedError("create the parameters gamma (ones) and beta (zeros), each of shape (d_model,)")

    def forward(self, x: Tensor) -> Tensor:
        raise NotImplementedError("write the body of LayerNorm.forward")
