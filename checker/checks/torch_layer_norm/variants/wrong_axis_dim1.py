# expect: the axis a reduction, softmax, cumsum or concatenation runs over
"""Statistics over dim=1, the positions of a (B, T, D) input."""
import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        mean = x.mean(-2, keepdim=True)
        var = ((x - mean) ** 2).mean(-2, keepdim=True)
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta
