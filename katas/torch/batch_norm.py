"""Batch normalization (Ioffe & Szegedy 2015, 批归一化) for (B, C) and (B, C, L) inputs, training and
evaluation, as torch.nn.BatchNorm1d computes it.

Shape legend:
    B  batch size
    C  num_features, the channel axis: ALWAYS axis 1
    L  length (optional third axis, e.g. a sequence or a 1-D signal)

Implement BatchNorm. Each channel c is normalised with statistics over every axis but C
(axis 0 for (B, C), axes 0 and 2 for (B, C, L); n = B or B · L elements per channel):

    training:    mean_c = mean of x[:, c]           var_c = BIASED variance (divide by n)
                 y = (x - mean_c) / sqrt(var_c + eps) * weight_c + bias_c
                 running_mean = (1 - momentum) * running_mean + momentum * mean_c
                 running_var  = (1 - momentum) * running_var  + momentum * var_c * n / (n - 1)
                                                    ^ UNBIASED variance for the running estimate, as torch
    evaluation:  y = (x - running_mean_c) / sqrt(running_var_c + eps) * weight_c + bias_c
                 (the running statistics are NOT updated)

Contrast with LayerNorm (层归一化): LayerNorm normalises each SAMPLE over its features; BatchNorm
normalises each CHANNEL over the batch, so in training one sample's output depends on the others.

__init__(num_features, eps=1e-5, momentum=0.1):
    weight        nn.Parameter (C,), ones
    bias          nn.Parameter (C,), zeros
    running_mean  buffer (C,), zeros      (self.register_buffer: saved in state_dict, not trained)
    running_var   buffer (C,), ones
    (the checker loads weights and buffers by these names; a num_batches_tracked counter is ignored)
forward(x):
    x        (B, C) or (B, C, L) float tensor
    returns  the same shape and dtype. Train or eval mode is self.training (module.train() / .eval()).
The running statistics are updated without autograd (under torch.no_grad(), or from detached
statistics); the batch statistics that normalise stay in the graph.

Rules: do not modify x.
Off limits: torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.functional.batch_norm, torch.batch_norm,
torch.nn.functional.instance_norm, torch.nn.functional.layer_norm, torch.nn.LayerNorm.
"""

import torch
from torch import Tensor, nn


class BatchNorm(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        raise NotImplementedError("create weight, bias (parameters) and running_mean, running_var (buffers)")

    def forward(self, x: Tensor) -> Tensor:
        raise NotImplementedError("write BatchNorm.forward: batch statistics in training, running ones in eval")
