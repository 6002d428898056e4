"""Karpathy makemore style: keepdim statistics, running buffers reassigned under no_grad, n = numel // C."""
import torch
from torch import Tensor, nn


class BatchNorm(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x: Tensor) -> Tensor:
        dims = (0,) if x.dim() == 2 else (0, 2)
        shape = (1, -1) if x.dim() == 2 else (1, -1, 1)
        if self.training:
            mean = x.mean(dim=dims, keepdim=True)
            var = x.var(dim=dims, keepdim=True, unbiased=False)
            n = x.numel() // x.shape[1]
            with torch.no_grad():
                self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean.view(-1)
                self.running_var = (1 - self.momentum) * self.running_var + self.momentum * var.view(-1) * n / (n - 1)
        else:
            mean = self.running_mean.view(shape)
            var = self.running_var.view(shape)
        xhat = (x - mean) / torch.sqrt(var + self.eps)
        return self.weight.view(shape) * xhat + self.bias.view(shape)
