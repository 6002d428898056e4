# expect: pools the batch AND the length
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
        dims = (0,)
        shape = (1, -1, 1) if x.dim() == 3 else (1, -1)
        if self.training:
            mean = x.mean(dim=0)
            var = x.var(dim=0, unbiased=False)
            n = x.size(0)
            x_hat = (x - mean) / torch.sqrt(var + self.eps)
            if x.dim() == 3:
                mean, var = mean.mean(-1), var.mean(-1)
            with torch.no_grad():
                self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean
                self.running_var = (1 - self.momentum) * self.running_var + self.momentum * var * n / (n - 1)
        else:
            x_hat = (x - self.running_mean.reshape(shape)) / torch.sqrt(self.running_var.reshape(shape) + self.eps)
        return self.weight.reshape(shape) * x_hat + self.bias.reshape(shape)
