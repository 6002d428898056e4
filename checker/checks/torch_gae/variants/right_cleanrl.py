"""CleanRL's ppo.py (vwxyzjn/cleanrl), its GAE loop as written, adapted minimally: CleanRL keeps time first,
(num_steps, num_envs), and stores with observation t the done of the step BEFORE it (dones[t] = "obs t starts a new
episode", next_done for the observation after the rollout). This contract's dones[:, t] is "ended after step t", so
the flags are moved one step later into CleanRL's layout: its dones[t + 1] is ours[t], its next_done ours[T - 1]."""
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    # the adaptation: (B, T) -> CleanRL's (T, B), its done convention
    rewards, values = rewards.T, values.T
    next_done = dones[:, -1]
    dones = torch.cat([torch.zeros_like(dones[:, :1]), dones[:, :-1]], dim=1).T
    next_value = last_value.reshape(1, -1)
    num_steps = rewards.shape[0]
    # CleanRL, as written (args.gamma, args.gae_lambda -> gamma, lam)
    with torch.no_grad():
        advantages = torch.zeros_like(rewards)
        lastgaelam = 0
        for t in reversed(range(num_steps)):
            if t == num_steps - 1:
                nextnonterminal = 1.0 - next_done
                nextvalues = next_value
            else:
                nextnonterminal = 1.0 - dones[t + 1]
                nextvalues = values[t + 1]
            delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
            advantages[t] = lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
        returns = advantages + values
    return advantages.T, returns.T
