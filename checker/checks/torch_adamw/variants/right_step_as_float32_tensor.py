# followup: float32
"""The bias corrections computed from the step held as a float32 tensor, as torch.optim keeps state["step"]: only
float32-accurate on float64 parameters, which the kata accepts as float32 internals and says so."""
import torch


def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
    beta1, beta2 = betas
    t = torch.tensor(step, dtype=torch.float32)
    exp_avg = exp_avg.mul(beta1).add(grad, alpha=1 - beta1)
    exp_avg_sq = exp_avg_sq.mul(beta2).addcmul(grad, grad, value=1 - beta2)
    m_hat = exp_avg / (1 - beta1 ** t)
    v_hat = exp_avg_sq / (1 - beta2 ** t)
    param = param * (1 - lr * weight_decay) - lr * m_hat / (v_hat.sqrt() + eps)
    return param, exp_avg, exp_avg_sq
