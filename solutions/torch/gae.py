"""Generalised advantage estimation, GAE(γ, λ) (reference answer).

Shape legend:
    B  batch: environments, or sequences (one episode each, or several)
    T  time steps (rollout length)

As Schulman et al. 2016, eq. 16, with episode ends: δ_t = r_t + γ·V(s_{t+1})·(1 - d_t) - V(s_t),
A_t = δ_t + γλ·(1 - d_t)·A_{t+1}, computed backwards from A_T = 0; returns = A + V. dones[:, t] = 1
means the episode ended after step t, so neither the next value nor the next advantage reaches t.
"""

import torch
from torch import Tensor


def reverse_scan(deltas: Tensor, not_done: Tensor, decay: float) -> Tensor:
    """A_t = δ_t + decay · (1 - d_t) · A_{t+1} for t = T-1 .. 0, from A_T = 0: (B, T), (B, T) -> (B, T)."""
    running = torch.zeros_like(deltas[:, -1])  # (B,) A_{t+1}, 0 after the last step
    backwards = []  # A_{T-1}, ..., A_0
    for t in reversed(range(deltas.shape[1])):
        running = deltas[:, t] + decay * not_done[:, t] * running  # (B,)
        backwards.append(running)
    return torch.stack(backwards[::-1], dim=1)  # T × (B,) -> (B, T)


def gae(rewards: Tensor, values: Tensor, dones: Tensor, last_value: Tensor, gamma: float = 0.99,
        lam: float = 0.95) -> tuple[Tensor, Tensor]:
    """(advantages, returns), each (B, T): GAE(γ, λ) by a reverse scan over the T steps."""
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError(f"gamma and lam must lie in [0, 1], got gamma={gamma}, lam={lam}")
    not_done = 1.0 - dones  # (B, T): 0 where the episode ended after step t
    # 1) V(s_{t+1}): the next step's value, the bootstrap value after the last step
    next_values = torch.cat([values[:, 1:], last_value.unsqueeze(1)], dim=1)  # (B, T-1) + (B, 1) -> (B, T)
    # 2) TD residuals; an episode's end cuts the value of the state after it
    deltas = rewards + gamma * next_values * not_done - values  # (B, T)
    # 3) reverse scan A_t = δ_t + γλ (1 - d_t) A_{t+1}: an episode's end cuts the recursion too
    advantages = reverse_scan(deltas, not_done, gamma * lam)  # (B, T)
    # 4) the value targets
    returns = advantages + values  # (B, T)
    return advantages, returns
