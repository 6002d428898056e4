# expect: a square root, power or exponent changed
"""The variance takes the cube of the deviations (a slip of the power), not the square (error model)."""
import torch
from torch import Tensor, nn


class LayerNorm(nn.Module):
    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))

    def forward(self, x: Tensor) -> Tensor:
        dev = x - x.mean(-1, keepdim=True)
        var = (dev ** 3).mean(-1, keepdim=True)
        return self.gamma * dev / torch.sqrt(var + self.eps) + self.beta
