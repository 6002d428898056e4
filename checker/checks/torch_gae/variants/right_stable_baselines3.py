"""Stable-Baselines3's RolloutBuffer.compute_returns_and_advantage (DLR-RM/stable-baselines3, buffers.py), adapted
minimally: SB3 works in NumPy on (buffer_size, n_envs) and stores episode_starts[t] = "obs t starts a new episode",
with the dones of the last step passed apart. This contract's dones[:, t] ("ended after step t") is moved one step
later into episode_starts, and the arrays keep the input's dtype (SB3's are float32)."""
import numpy as np
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    buffer_rewards = rewards.detach().numpy().T
    buffer_values = values.detach().numpy().T
    flags = dones.detach().numpy().T
    episode_starts = np.concatenate([np.zeros_like(flags[:1]), flags[:-1]], axis=0)
    last_values = last_value.detach().numpy().flatten()
    last_dones = flags[-1]
    buffer_size = buffer_rewards.shape[0]
    advantages = np.zeros_like(buffer_rewards)

    last_gae_lam = 0
    for step in reversed(range(buffer_size)):
        if step == buffer_size - 1:
            next_non_terminal = 1.0 - last_dones
            next_values = last_values
        else:
            next_non_terminal = 1.0 - episode_starts[step + 1]
            next_values = buffer_values[step + 1]
        delta = buffer_rewards[step] + gamma * next_values * next_non_terminal - buffer_values[step]
        last_gae_lam = delta + gamma * lam * next_non_terminal * last_gae_lam
        advantages[step] = last_gae_lam
    returns = advantages + buffer_values
    return torch.from_numpy(advantages.T.copy()), torch.from_numpy(returns.T.copy())
