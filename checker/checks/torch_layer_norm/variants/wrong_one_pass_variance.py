# expect: mean(x²) - mean(x)²
"""One-pass variance E[x²] - E[x]²: exact algebra, catastrophic cancellation."""
import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = (x * x).mean(-1, keepdim=True) - mean * mean
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta
