# expect: next_values
"""δ_t built from V(s_t) twice: r_t + γ·V(s_t) - V(s_t), the next state's value never read."""
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    T = rewards.shape[1]
    not_done = 1.0 - dones
    deltas = rewards + gamma * values * not_done - values
    advantages = torch.zeros_like(rewards)
    last = torch.zeros_like(last_value)
    for t in reversed(range(T)):
        last = deltas[:, t] + gamma * lam * not_done[:, t] * last
        advantages[:, t] = last
    return advantages, advantages + values
