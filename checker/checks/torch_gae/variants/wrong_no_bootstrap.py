# expect: last_value
"""TRL's PPO loop kept as it is, nextvalues = 0.0 after the last step: right for a response that ends there, wrong
for a rollout cut mid-episode, whose bootstrap value last_value is thrown away."""
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    lastgaelam = 0
    advantages_reversed = []
    gen_length = rewards.shape[1]
    for t in reversed(range(gen_length)):
        nextvalues = values[:, t + 1] if t < gen_length - 1 else 0.0
        delta = rewards[:, t] + gamma * nextvalues * (1.0 - dones[:, t]) - values[:, t]
        lastgaelam = delta + gamma * lam * (1.0 - dones[:, t]) * lastgaelam
        advantages_reversed.append(lastgaelam)
    advantages = torch.stack(advantages_reversed[::-1], dim=1)
    returns = advantages + values
    return advantages, returns
