# expect: reversed(range(T))
"""The scan written forwards: A_t = δ_t + γλ(1 - d_t) A_(t-1), the recursion of a discounted SUM OF THE PAST."""
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    T = rewards.shape[1]
    not_done = 1.0 - dones
    next_values = torch.cat([values[:, 1:], last_value.unsqueeze(1)], dim=1)
    deltas = rewards + gamma * next_values * not_done - values
    advantages = torch.zeros_like(rewards)
    last_advantage = torch.zeros_like(last_value)
    for t in range(T):
        last_advantage = deltas[:, t] + gamma * lam * not_done[:, t] * last_advantage
        advantages[:, t] = last_advantage
    return advantages, advantages + values
