import torch
from torch import Tensor, nn


class BatchNorm(nn.Module):
    """As torch's _NormBase: with a num_batches_tracked buffer too."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x: Tensor) -> Tensor:
        dims = [0] + list(range(2, x.dim()))
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training:
            mean = x.mean(dims)
            var = x.var(dims, unbiased=False)
            n = x.numel() // x.size(1)
            with torch.no_grad():
                self.num_batches_tracked += 1
                self.running_mean.copy_((1 - self.momentum) * self.running_mean + self.momentum * mean)
                self.running_var.copy_((1 - self.momentum) * self.running_var + self.momentum * var * n / (n - 1))
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean.view(shape)) / torch.sqrt(var.view(shape) + self.eps) * self.weight.view(shape) + self.bias.view(shape)
