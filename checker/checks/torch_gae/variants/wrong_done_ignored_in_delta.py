# expect: not_done
"""The done cuts the recursion but not the TD residual: the next episode's first value leaks into δ_t."""
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    B, T = rewards.shape
    advantages = torch.zeros_like(rewards)
    lastgaelam = torch.zeros(B, dtype=rewards.dtype)
    for t in reversed(range(T)):
        nextvalues = values[:, t + 1] if t < T - 1 else last_value
        delta = rewards[:, t] + gamma * nextvalues - values[:, t]
        lastgaelam = delta + gamma * lam * (1.0 - dones[:, t]) * lastgaelam
        advantages[:, t] = lastgaelam
    return advantages, advantages + values
