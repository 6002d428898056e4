# expect: at the optimizer's full lr
"""A LambdaLR whose lambda returns 1 for step 0 (to dodge 0 ** -0.5) and the formula of s otherwise."""
import torch


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    if step < 1:
        raise ValueError("step must be >= 1")
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def noam_scheduler(optimizer, d_model, warmup_steps, factor=1.0):
    def lr_lambda(step_num):
        if step_num == 0:
            return 1
        return noam_lr(step_num, d_model, warmup_steps, factor)

    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
