"""A subclass of LRScheduler whose get_lr reads last_epoch (0 during the first step) and adds one;
noam_lr written with an if on the warm-up and math.sqrt."""
import math

from torch.optim.lr_scheduler import LRScheduler


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    if step < 1:
        raise ValueError(f"step must be at least 1, got {step}")
    if step < warmup_steps:
        rate = step / (warmup_steps * math.sqrt(warmup_steps))
    else:
        rate = 1.0 / math.sqrt(step)
    return factor * rate / math.sqrt(d_model)


class NoamScheduler(LRScheduler):
    def __init__(self, optimizer, d_model, warmup_steps, factor=1.0):
        self.d_model, self.warmup_steps, self.factor = d_model, warmup_steps, factor
        super().__init__(optimizer)

    def get_lr(self):
        rate = noam_lr(self.last_epoch + 1, self.d_model, self.warmup_steps, self.factor)
        return [base_lr * rate for base_lr in self.base_lrs]


def noam_scheduler(optimizer, d_model, warmup_steps, factor=1.0):
    return NoamScheduler(optimizer, d_model, warmup_steps, factor)
