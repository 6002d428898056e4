import math

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, d_model, eps=1e-6):
        super().__init__()
        self.d_model, self.eps = d_model, eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x):
        h = x.double() if x.dtype == torch.float64 else x.float()
        ms = torch.einsum("...d,...d->...", h, h).unsqueeze(-1) / self.d_model  # (..., 1)
        y = h / (ms + self.eps) ** 0.5
        return self.weight * y.to(x.dtype)
