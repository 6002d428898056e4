# expect: the axis a reduction, softmax, cumsum or concatenation runs over
"""mean over dim=1: the sequence axis for (B, T, D), the features only for 2-D input."""

import torch
from torch import Tensor, nn


class RMSNorm(nn.Module):
    """Scales each vector along the last axis to unit root mean square, then by a learned weight."""

    def __init__(self, d_model: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))  # (D,) starts as the identity scale

    def forward(self, x: Tensor) -> Tensor:
        # 1) at least float32: x² overflows float16 above 256 (float64 stays float64)
        h = x.to(torch.promote_types(x.dtype, torch.float32))  # (..., D)
        # 2) mean square over the last axis; eps inside the root keeps an all-zero vector at 0
        ms = h.pow(2).mean(dim=1, keepdim=True)  # (..., 1)
        h = h * torch.rsqrt(ms + self.eps)  # (..., D)
        # 3) back to x's dtype, then the learned scale broadcast over the leading axes
        return h.to(x.dtype) * self.weight  # (..., D) * (D,) -> (..., D)
