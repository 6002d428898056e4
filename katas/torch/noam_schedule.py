"""The learning-rate schedule of "Attention Is All You Need" (§5.3), known as the Noam schedule.

Legend (no tensors here: numbers only):
    step          the optimizer step being taken, counted from 1 (an int)
    d_model       the model width D (512 in the paper)
    warmup_steps  the length of the linear warm-up (4000 in the paper)
    factor        an extra multiplier (the Annotated Transformer's `factor`; 1.0 in the paper)

Implement two functions.

noam_lr(step, d_model, warmup_steps, factor=1.0) -> float

    lr = factor · d_model^(-0.5) · min(step^(-0.5), step · warmup_steps^(-1.5))

    It rises linearly up to step == warmup_steps (its peak), then decays as 1/√step.
    step counts from 1. What step < 1 should do is left open and asked as a follow-up (the reference
    raises ValueError; the Annotated Transformer maps 0 to 1). Return a Python float.

noam_scheduler(optimizer, d_model, warmup_steps, factor=1.0) -> torch.optim.lr_scheduler.LRScheduler

    A scheduler for `optimizer` (a torch.optim.Optimizer built with lr=1.0: the scheduler's value
    multiplies it, as torch.optim.lr_scheduler.LambdaLR does). Used the usual way:

        for k in 1, 2, 3, ...:
            ...; optimizer.step(); scheduler.step()

    the lr in effect during the k-th optimizer.step() (optimizer.param_groups[0]["lr"]) must be
    noam_lr(k, d_model, warmup_steps, factor), from k = 1 on. Note: LambdaLR calls its lambda
    once at construction with 0, then with 1, 2, ... after each scheduler.step().

Nothing is off limits: LambdaLR is the natural choice.
"""

import math

import torch
from torch.optim.lr_scheduler import LambdaLR, LRScheduler


def noam_lr(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    raise NotImplementedError("write noam_lr")


def noam_scheduler(optimizer: torch.optim.Optimizer, d_model: int, warmup_steps: int,
                   factor: float = 1.0) -> LRScheduler:
    raise NotImplementedError("write noam_scheduler")
