# expect: should return a Python float
"""Computes the rate with torch and returns a 0-d tensor."""
import torch
from torch.optim.lr_scheduler import LambdaLR


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    if step < 1:
        raise ValueError("step must be >= 1")
    s = torch.tensor(float(step), dtype=torch.float64)
    return factor * d_model ** -0.5 * torch.minimum(s.rsqrt(), s * warmup_steps ** -1.5)


def noam_scheduler(optimizer, d_model, warmup_steps, factor=1.0):
    return LambdaLR(optimizer, lambda s: float(noam_lr(s + 1, d_model, warmup_steps, factor)))
