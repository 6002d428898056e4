# expect: the standard deviation
import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, d_model, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x):
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        std = torch.sqrt(h.var(-1, keepdim=True, unbiased=False) + self.eps)
        return (h / std).to(x.dtype) * self.weight
