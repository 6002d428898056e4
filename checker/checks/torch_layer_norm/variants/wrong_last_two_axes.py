# expect: the axis a reduction, softmax, cumsum or concatenation runs over
"""Statistics over (T, D), as if it were nn.LayerNorm([T, D])."""

import torch
from torch import Tensor, nn


class LayerNorm(nn.Module):
    """Normalises each vector along the last axis, then scales by gamma and shifts by beta."""

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))  # (D,) starts as the identity scale
        self.beta = nn.Parameter(torch.zeros(d_model))  # (D,) starts with no shift

    def forward(self, x: Tensor) -> Tensor:
        # 1) statistics of each vector over the last axis; subtracting the mean first keeps the variance exact
        mean = x.mean(dim=(-2, -1), keepdim=True)  # (..., 1)
        centered = x - mean  # (..., D)
        var = centered.pow(2).mean(dim=(-2, -1), keepdim=True)  # (..., 1) biased: divides by D
        # 2) normalise; eps inside the square root keeps a constant vector finite
        x_hat = centered / torch.sqrt(var + self.eps)  # (..., D)
        # 3) learned scale and shift, broadcast over the leading axes
        return self.gamma * x_hat + self.beta  # (D,) * (..., D) + (D,) -> (..., D)
