# expect: lam
"""The recursion discounted by γ alone: the discounted sum of TD residuals, GAE(γ, 1) whatever λ is passed."""
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    T = rewards.shape[1]
    not_done = 1.0 - dones
    next_values = torch.cat([values[:, 1:], last_value[:, None]], dim=1)
    deltas = rewards + gamma * next_values * not_done - values
    advantages = torch.zeros_like(rewards)
    running = torch.zeros_like(last_value)
    for t in range(T - 1, -1, -1):
        running = deltas[:, t] + gamma * not_done[:, t] * running
        advantages[:, t] = running
    return advantages, advantages + values
