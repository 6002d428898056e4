import torch
from torch import Tensor


def adamw_step(param: Tensor, grad: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor, step: int, lr: float = 1e-3,
               betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
               weight_decay: float = 1e-2) -> tuple[Tensor, Tensor, Tensor]:
    """optax.adamw: scale_by_adam, add_decayed_weights (on the old param), scale by -lr."""
    b1, b2 = betas
    mu = torch.lerp(exp_avg, grad, 1 - b1)
    nu = torch.lerp(exp_avg_sq, grad.square(), 1 - b2)
    mu_hat = mu / (1 - b1 ** step)
    nu_hat = nu / (1 - b2 ** step)
    updates = mu_hat / (torch.sqrt(nu_hat) + eps) + weight_decay * param
    return param - lr * updates, mu, nu
