"""Dive into Deep Learning's batch_norm function and BatchNorm module (chapter "Batch Normalization"),
with torch's conventions: momentum weighs the new batch, and the moving variance is unbiased."""
import torch
from torch import nn


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum, training):
    if not training:
        X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
        return gamma * X_hat + beta, moving_mean, moving_var
    assert len(X.shape) in (2, 3)
    if len(X.shape) == 2:
        mean = X.mean(dim=0)
        var = ((X - mean) ** 2).mean(dim=0)
    else:
        mean = X.mean(dim=(0, 2), keepdim=True)
        var = ((X - mean) ** 2).mean(dim=(0, 2), keepdim=True)
    X_hat = (X - mean) / torch.sqrt(var + eps)
    n = X.numel() // X.shape[1]
    moving_mean = (1.0 - momentum) * moving_mean + momentum * mean.detach()
    moving_var = (1.0 - momentum) * moving_var + momentum * var.detach() * n / (n - 1)
    return gamma * X_hat + beta, moving_mean, moving_var


class BatchNorm(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, X):
        shape = (1, -1, 1) if X.dim() == 3 else (1, -1)
        Y, mean, var = batch_norm(X, self.weight.view(shape), self.bias.view(shape), self.running_mean.view(shape),
                                  self.running_var.view(shape), self.eps, self.momentum, self.training)
        if self.training:
            self.running_mean, self.running_var = mean.reshape(-1), var.reshape(-1)
        return Y
