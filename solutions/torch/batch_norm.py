"""Batch normalization for (B, C) and (B, C, L) inputs, as torch.nn.BatchNorm1d (Ioffe & Szegedy 2015)
(reference answer).

Shape legend:
    B  batch size        C  num_features, the channel axis (axis 1)        L  length (optional)

Training: normalise each channel with the batch's mean and BIASED variance over every axis but C,
and update running_mean / running_var with momentum (running_var gets the UNBIASED variance).
Evaluation: normalise with the running statistics. Then scale by weight and shift by bias.
"""

import torch
from torch import Tensor, nn


class BatchNorm(nn.Module):
    """Per-channel normalisation with batch statistics in training and running ones in evaluation."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))  # (C,) gamma
        self.bias = nn.Parameter(torch.zeros(num_features))  # (C,) beta
        self.register_buffer("running_mean", torch.zeros(num_features))  # (C,)
        self.register_buffer("running_var", torch.ones(num_features))  # (C,)

    def forward(self, x: Tensor) -> Tensor:
        dims = [0, 2] if x.dim() == 3 else [0]  # every axis but C: the batch (and the length)
        shape = [1, -1, 1] if x.dim() == 3 else [1, -1]  # (C,) -> broadcast over B (and L)
        if self.training:
            # 1) batch statistics per channel; the biased variance normalises
            mean = x.mean(dim=dims)  # (C,)
            var = x.var(dim=dims, unbiased=False)  # (C,)
            # 2) running statistics: an exponential moving average, with the UNBIASED variance
            n = x.numel() // x.shape[1]  # elements per channel: B (or B * L)
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * var * n / (n - 1))
        else:
            mean, var = self.running_mean, self.running_var  # (C,) each
        # 3) normalise, then scale and shift per channel
        x_hat = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + self.eps)  # (B, C[, L])
        return x_hat * self.weight.view(shape) + self.bias.view(shape)  # (B, C[, L])
