# expect: advantages + next_values
"""The value target built on the NEXT state's value, R_t = A_t + V(s_(t+1)): A_t is measured against V(s_t), so the
return it implies is A_t + V(s_t)."""
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    T = rewards.shape[1]
    not_done = 1.0 - dones
    next_values = torch.cat([values[:, 1:], last_value.unsqueeze(1)], dim=1)
    deltas = rewards + gamma * next_values * not_done - values
    advantages = torch.zeros_like(rewards)
    last = torch.zeros_like(last_value)
    for t in reversed(range(T)):
        last = deltas[:, t] + gamma * lam * not_done[:, t] * last
        advantages[:, t] = last
    return advantages, advantages + next_values
