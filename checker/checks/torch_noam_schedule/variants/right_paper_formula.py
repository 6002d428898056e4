# followup: what is the rate at step 0
"""The paper's formula as written, no guard: lrate = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)."""
from torch.optim.lr_scheduler import LambdaLR


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def noam_scheduler(optimizer, d_model, warmup_steps, factor=1.0):
    # LambdaLR calls the lambda with 0 when it is built: that is the lr of the first optimizer step
    return LambdaLR(optimizer, lambda s: noam_lr(s + 1, d_model, warmup_steps, factor))
