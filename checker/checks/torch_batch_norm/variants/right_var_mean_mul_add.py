"""torch.var_mean(correction=0), running buffers updated with mul_().add_(alpha=) from detached statistics, rsqrt."""
import torch
from torch import Tensor, nn


class BatchNorm(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.num_features = num_features
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x: Tensor) -> Tensor:
        reduce = [d for d in range(x.dim()) if d != 1]
        bshape = [1] * x.dim()
        bshape[1] = self.num_features
        if self.training:
            var, mean = torch.var_mean(x, dim=reduce, correction=0)
            n = x.numel() / self.num_features
            self.running_mean.mul_(1 - self.momentum).add_(mean.detach(), alpha=self.momentum)
            self.running_var.mul_(1 - self.momentum).add_(var.detach() * (n / (n - 1)), alpha=self.momentum)
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean.view(bshape)) * torch.rsqrt(var.view(bshape) + self.eps) * self.weight.view(bshape) \
            + self.bias.view(bshape)
