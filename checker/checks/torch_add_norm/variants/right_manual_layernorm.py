"""A hand-written LayerNorm (biased variance, eps inside the root) and two residual helpers."""
import torch
from torch import nn


class MyLayerNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class AddNorm(nn.Module):
    def __init__(self, d_model: int, pre_norm: bool = False, dropout: float = 0.0, eps: float = 1e-5):
        super().__init__()
        self.pre_norm = pre_norm
        self.norm = MyLayerNorm(d_model, eps)
        self.dropout = nn.Dropout(dropout)

    def post(self, x, sublayer):
        residual = x
        out = self.dropout(sublayer(x))
        return self.norm(residual + out)

    def pre(self, x, sublayer):
        residual = x
        h = self.norm(x)
        h = sublayer(h)
        return residual + self.dropout(h)

    def forward(self, x, sublayer):
        return self.pre(x, sublayer) if self.pre_norm else self.post(x, sublayer)
