"""Channels moved last and flattened to (n, C); statistics over rows; running statistics with lerp_
(running + momentum * (batch - running)), in place on the buffers."""
import torch
from torch import nn


class BatchNorm(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        rows = x.movedim(1, -1).reshape(-1, self.num_features)  # (B[, L], C) -> (n, C)
        if self.training:
            mean = rows.mean(0)
            var = rows.var(0, correction=0)
            with torch.no_grad():
                self.running_mean.lerp_(mean, self.momentum)
                self.running_var.lerp_(rows.var(0, correction=1), self.momentum)
        else:
            mean, var = self.running_mean, self.running_var
        out = (rows - mean) * torch.rsqrt(var + self.eps) * self.weight + self.bias
        return out.reshape(x.movedim(1, -1).shape).movedim(-1, 1)
