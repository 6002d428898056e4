import math

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, d_model, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x):
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        D = h.shape[-1]
        rms = torch.sqrt(torch.linalg.vector_norm(h, dim=-1, keepdim=True) ** 2 / D + self.eps)
        return (h / rms).to(x.dtype) * self.weight
