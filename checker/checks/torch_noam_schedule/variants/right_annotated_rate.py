# followup: Annotated Transformer's rate()
"""The Annotated Transformer's rate() as noam_lr (step 0 mapped to 1), and its LambdaLR built on it."""
from torch.optim.lr_scheduler import LambdaLR


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    """
    we have to default the step to 1 for LambdaLR function
    to avoid zero raising to negative power.
    """
    if step == 0:
        step = 1
    return factor * (d_model ** (-0.5) * min(step ** (-0.5), step * warmup_steps ** (-1.5)))


def noam_scheduler(optimizer, d_model, warmup_steps, factor=1.0):
    return LambdaLR(optimizer=optimizer, lr_lambda=lambda step: noam_lr(step, d_model, warmup_steps, factor))
