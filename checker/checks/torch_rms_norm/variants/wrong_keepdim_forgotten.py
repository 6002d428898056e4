# expect: the reference raises your error too with one change, keepdim dropped
"""mean without keepdim: (..., ) does not broadcast against (..., D)."""

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
        ms = h.pow(2).mean(dim=-1)  # (..., 1)
        h = h * torch.rsqrt(ms + self.eps)  # (..., D)
        # 3) back to x's dtype, then the learned scale broadcast over the leading axes
        return h.to(x.dtype) * self.weight  # (..., D) * (D,) -> (..., D)
