"""torch.lerp for both moments (m + (1 − β)(g − m)) and torch.addcdiv on a new tensor."""
import math

import torch


def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
    b1, b2 = betas
    m = torch.lerp(exp_avg, grad, 1 - b1)
    v = torch.lerp(exp_avg_sq, grad * grad, 1 - b2)
    denom = v.sqrt().div(math.sqrt(1 - b2**step)).add(eps)
    new = torch.addcdiv(param * (1 - lr * weight_decay), m, denom, value=-lr / (1 - b1**step))
    return new, m, v
