# expect: the default dtype was float32 before the call of LayerNorm and is float64 after it
"""Right numbers, but forward switches torch's default dtype to float64 "for stable statistics" and never
switches it back: every tensor the caller makes afterwards (torch.zeros, torch.tensor(0.5)) is float64."""
import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        torch.set_default_dtype(torch.float64)
        mean = x.mean(dim=-1, keepdim=True)
        var = (x - mean).pow(2).mean(dim=-1, keepdim=True)
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta
