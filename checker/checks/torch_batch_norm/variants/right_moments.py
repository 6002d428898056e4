"""The variance from the first two moments, E[x²] - E[x]², and the unbiased one by Bessel's factor."""
import torch
from torch import nn


class BatchNorm(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1):
        super().__init__()
        self.eps = eps
        self.momentum = momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        axes = [d for d in range(x.dim()) if d != 1]
        keep = [1] * x.dim()
        keep[1] = -1
        if self.training:
            n = x.numel() // x.shape[1]
            mu = x.mean(axes)
            sigma2 = (x * x).mean(axes) - mu * mu
            m = self.momentum
            self.running_mean.copy_((1 - m) * self.running_mean + m * mu.detach())
            self.running_var.copy_((1 - m) * self.running_var + m * sigma2.detach() * (n / (n - 1)))
        else:
            mu, sigma2 = self.running_mean, self.running_var
        y = (x - mu.view(keep)) / (sigma2.view(keep) + self.eps).sqrt()
        return y * self.weight.view(keep) + self.bias.view(keep)
