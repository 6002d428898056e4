# followup: an `assert` was recognised
"""noam_lr guarded by an assert instead of ValueError."""
from torch.optim.lr_scheduler import LambdaLR


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    assert step >= 1, "steps count from 1"
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def noam_scheduler(optimizer, d_model, warmup_steps, factor=1.0):
    return LambdaLR(optimizer, lambda s: noam_lr(s + 1, d_model, warmup_steps, factor))
