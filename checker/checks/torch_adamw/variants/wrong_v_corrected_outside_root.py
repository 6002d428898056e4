# expect: a square root, power or exponent changed
"""The second moment corrected after its root: sqrt(v) / (1 - beta2^t) where sqrt(v / (1 - beta2^t)) belongs."""
import math

from torch import Tensor


def adamw_step(param: Tensor, grad: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor, step: int, lr: float = 1e-3,
               betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
               weight_decay: float = 1e-2) -> tuple[Tensor, Tensor, Tensor]:
    """Returns the new (param, exp_avg, exp_avg_sq); step t counts from 1 and includes this step."""
    beta1, beta2 = betas
    # 1) decoupled weight decay, on the parameter before the update (not added to the gradient)
    param = param * (1 - lr * weight_decay)  # (...)
    # 2) exponential moving averages of the gradient and of its square
    exp_avg = beta1 * exp_avg + (1 - beta1) * grad  # (...)
    exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * grad * grad  # (...)
    # 3) bias correction (the averages start at 0), eps outside the root of the corrected v
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    denom = exp_avg_sq.sqrt() / bias_correction2 + eps
    return param - lr / bias_correction1 * exp_avg / denom, exp_avg, exp_avg_sq
