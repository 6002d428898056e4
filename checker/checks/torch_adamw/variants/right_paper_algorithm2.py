"""Loshchilov & Hutter's Algorithm 2 (AdamW), with the schedule multiplier η_t = 1 and α = lr:
θ_t = θ_{t-1} − (α · m̂_t / (√v̂_t + ε) + α · λ · θ_{t-1}), one expression."""
import torch


def adamw_step(theta, g, m, v, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
    beta1, beta2 = betas
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g.pow(2)
    m_hat = m / (1 - beta1**t)
    v_hat = v / (1 - beta2**t)
    theta = theta - (lr * m_hat / (v_hat.sqrt() + eps) + lr * weight_decay * theta)
    return theta, m, v
