# followup: the Adam paper's "more efficient" form
"""The Adam paper's efficient form (Kingma & Ba, end of section 2), as Hugging Face's AdamW computes the
step: step_size = lr · √(1 − β2^t) / (1 − β1^t), denom = √v + ε; decoupled decay before the update."""
import math


def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
    beta1, beta2 = betas
    param = param * (1.0 - lr * weight_decay)
    exp_avg = exp_avg * beta1 + grad * (1.0 - beta1)
    exp_avg_sq = exp_avg_sq * beta2 + grad * grad * (1.0 - beta2)
    step_size = lr * math.sqrt(1.0 - beta2**step) / (1.0 - beta1**step)
    denom = exp_avg_sq.sqrt() + eps
    return param - step_size * exp_avg / denom, exp_avg, exp_avg_sq
