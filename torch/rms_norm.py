"""RMSNorm (root-mean-square layer normalization, as in LLaMA), from scratch.

Shape legend:
    ...  any leading axes: (B, T), (T,), (B, H, T), ...
    D    d_model, the size of the last axis, which is normalised

Implement RMSNorm (Zhang & Sennrich 2019, "Root Mean Square Layer Normalization"; used by LLaMA):

    rms = sqrt(mean of x^2 over the last axis + eps)      eps INSIDE the square root
    y   = x / rms * weight

No mean is subtracted and there is no bias: that is what makes it cheaper than LayerNorm.

__init__(d_model, eps=1e-6):
    weight  nn.Parameter of shape (D,), initialised to ones (the name nn.RMSNorm and LLaMA use)
    (the checker loads weights into `weight` by this name)
forward(x):
    x        (..., D) float tensor (float64, float32, or float16/bfloat16)
    returns  (..., D), same dtype as x (the module is cast to x's dtype, e.g. .half(), as usual);
             every vector along the last axis is normalised on its own

Precision: float64 input is computed in float64. float16/bfloat16 input is computed in float32
(x^2 overflows float16 above 256) and the result is returned in x's dtype, as nn.RMSNorm does.
An all-zero vector must come out as zeros, not NaN.

Rules: do not modify x.
Off limits: torch.nn.RMSNorm, torch.nn.functional.rms_norm, torch.nn.LayerNorm,
torch.nn.functional.layer_norm.
"""

import torch
from torch import Tensor, nn


class RMSNorm(nn.Module):
    def __init__(self, d_model: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        raise NotImplementedError("create the parameter weight (ones) of shape (d_model,)")

    def forward(self, x: Tensor) -> Tensor:
        raise NotImplementedError("write the body of RMSNorm.forward")
