# expect: that is LayerNorm
import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, d_model, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x):
        x = x - x.mean(-1, keepdim=True)
        return self.weight * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
