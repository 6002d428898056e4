# followup: as the Annotated Transformer's rate() does
"""The Annotated Transformer's rate(): step 0 is mapped to 1, so steps 1 and 2 share noam_lr(1)."""
from torch.optim.lr_scheduler import LambdaLR


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    if step < 1:
        raise ValueError("step must be >= 1")
    return factor * (d_model ** (-0.5) * min(step ** (-0.5), step * warmup_steps ** (-1.5)))


def rate(step, model_size, factor, warmup):
    if step == 0:
        step = 1
    return factor * (model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5)))


def noam_scheduler(optimizer, d_model, warmup_steps, factor=1.0):
    return LambdaLR(optimizer=optimizer, lr_lambda=lambda step: rate(step, d_model, factor, warmup_steps))
