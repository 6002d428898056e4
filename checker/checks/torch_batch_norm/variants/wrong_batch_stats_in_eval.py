# expect: a branch taken always, or never (training, eval, a flag)
import torch
from torch import nn


class BatchNorm(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        dims = (0, 2) if x.dim() == 3 else (0,)
        shape = (1, -1, 1) if x.dim() == 3 else (1, -1)
        mean = x.mean(dim=dims)
        var = x.var(dim=dims, unbiased=False)
        if self.training:
            n = x.numel() / x.size(1)
            with torch.no_grad():
                self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean
                self.running_var = (1 - self.momentum) * self.running_var + self.momentum * var * n / (n - 1)
        x_hat = (x - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + self.eps)
        return self.weight.reshape(shape) * x_hat + self.bias.reshape(shape)
