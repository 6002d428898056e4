# expect: (B, T)
"""CleanRL's (T, B) layout assumed: the scan runs over axis 0, the batch, and each 'step' is a whole row."""
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    num_steps = rewards.shape[0]
    advantages = torch.zeros_like(rewards)
    lastgaelam = 0
    for t in reversed(range(num_steps)):
        nextvalues = values[t + 1] if t < num_steps - 1 else last_value
        nextnonterminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
    return advantages, advantages + values
