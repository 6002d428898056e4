# expect: second group's lr
"""The lambda counts its own calls instead of reading the step LambdaLR passes: right with one param group, twice as fast with two."""
from torch.optim.lr_scheduler import LambdaLR


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    if step < 1:
        raise ValueError(step)
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def noam_scheduler(optimizer, d_model, warmup_steps, factor=1.0):
    calls = {"n": 0}

    def lam(_):
        calls["n"] += 1
        return noam_lr(calls["n"], d_model, warmup_steps, factor)

    return LambdaLR(optimizer, lam)
