# expect: an argument replaced by a value written into the code
"""The paper's d_model = 512 is written in, whatever d_model the caller passes (error model)."""
import torch
from torch.optim.lr_scheduler import LambdaLR, LRScheduler


def noam_lr(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    if step < 1:
        raise ValueError("step starts at 1")
    return factor * 512 ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def noam_scheduler(optimizer: torch.optim.Optimizer, d_model: int, warmup_steps: int,
                   factor: float = 1.0) -> LRScheduler:
    return LambdaLR(optimizer, lambda s: noam_lr(s + 1, d_model, warmup_steps, factor))
