"""Explicit sums over the last axis, x.var(unbiased=False), and addcmul for the affine step."""
import math

import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.d_model = d_model
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        mean = x.sum(dim=-1, keepdim=True) / self.d_model
        var = x.var(dim=-1, unbiased=False, keepdim=True)
        x_hat = (x - mean) / (var + self.eps).sqrt()
        return torch.addcmul(self.beta, self.gamma, x_hat)
