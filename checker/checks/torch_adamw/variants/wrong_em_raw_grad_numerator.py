# expect: one variable read where another belongs
"""The update's numerator is the raw gradient where the bias-corrected first moment belongs (error model)."""
import math

from torch import Tensor


def adamw_step(param: Tensor, grad: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor, step: int, lr: float = 1e-3,
               betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
               weight_decay: float = 1e-2) -> tuple[Tensor, Tensor, Tensor]:
    b1, b2 = betas
    decayed = param * (1 - lr * weight_decay)
    m = b1 * exp_avg + (1 - b1) * grad
    v = b2 * exp_avg_sq + (1 - b2) * grad ** 2
    step_size = lr / (1 - b1 ** step)
    v_hat_root = (v / (1 - b2 ** step)).sqrt()
    return decayed - step_size * grad / (v_hat_root + eps), m, v
