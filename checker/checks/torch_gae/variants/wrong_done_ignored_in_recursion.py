# expect: not_done
"""TRL's loop with the done added to δ only: the advantage of the next episode still flows back across the cut."""
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    T = rewards.shape[1]
    lastgaelam = 0
    advantages_reversed = []
    for t in reversed(range(T)):
        nextvalues = values[:, t + 1] if t < T - 1 else last_value
        delta = rewards[:, t] + gamma * nextvalues * (1.0 - dones[:, t]) - values[:, t]
        lastgaelam = delta + gamma * lam * lastgaelam
        advantages_reversed.append(lastgaelam)
    advantages = torch.stack(advantages_reversed[::-1], dim=1)
    return advantages, advantages + values
