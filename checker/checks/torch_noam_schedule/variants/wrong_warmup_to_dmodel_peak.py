# expect: rises in a straight line
"""Warm-up as a straight line to d_model^-0.5: step / warmup_steps."""

from torch.optim.lr_scheduler import LambdaLR, LRScheduler


def noam_lr(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    """factor · d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5), for step >= 1."""
    if step < 1:
        raise ValueError(f"step counts optimizer steps from 1, got {step}")
    # 1) linear warm-up (step · warmup^-1.5) until the two branches meet at step == warmup, 2) then 1/√step
    if step < warmup_steps:
        return factor * d_model ** -0.5 * step / warmup_steps
    return factor * d_model ** -0.5 * step ** -0.5


def noam_scheduler(optimizer, d_model: int, warmup_steps: int, factor: float = 1.0) -> LRScheduler:
    """LambdaLR whose value during the k-th optimizer.step() is noam_lr(k) (times the optimizer's lr)."""
    # LambdaLR calls the lambda with 0 at construction (the lr of the 1st step), then 1, 2, ...: shift by one
    return LambdaLR(optimizer, lambda s: noam_lr(s + 1, d_model, warmup_steps, factor))
