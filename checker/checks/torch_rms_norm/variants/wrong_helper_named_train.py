# expect: hides nn.Module's own train
"""A helper that normalises in float32 named `train`, which replaces nn.Module.train: eval() calls train(False)."""

import torch
from torch import Tensor, nn


class RMSNorm(nn.Module):
    def __init__(self, d_model: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def train(self, x: Tensor, scale: Tensor) -> Tensor:
        h = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return h.to(x.dtype) * scale

    def forward(self, x: Tensor) -> Tensor:
        return self.train(x, self.weight)
