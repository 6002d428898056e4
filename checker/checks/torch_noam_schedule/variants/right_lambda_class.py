"""A callable class for LambdaLR (picklable, unlike a lambda), with the step shifted inside it."""
import torch


def noam_lr(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    if step <= 0:
        raise ValueError("the first optimizer step is step 1")
    return factor * (d_model ** -0.5) * min(step ** -0.5, step * warmup_steps ** -1.5)


class NoamLambda:
    def __init__(self, d_model, warmup_steps, factor):
        self.d_model, self.warmup_steps, self.factor = d_model, warmup_steps, factor

    def __call__(self, scheduler_step):  # 0 at construction = the lr of optimizer step 1
        return noam_lr(scheduler_step + 1, self.d_model, self.warmup_steps, self.factor)


def noam_scheduler(optimizer, d_model, warmup_steps, factor=1.0):
    return torch.optim.lr_scheduler.LambdaLR(optimizer, NoamLambda(d_model, warmup_steps, factor))
