# expect: dones
"""CleanRL's loop copied as it is (nextnonterminal = 1 - dones[t + 1]) onto this contract's dones, which already
say "ended after step t": every cut lands one step late, and the bootstrap is cut by the last step's own flag."""
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    T = rewards.shape[1]
    next_done = dones[:, -1]
    advantages = torch.zeros_like(rewards)
    lastgaelam = 0
    for t in reversed(range(T)):
        if t == T - 1:
            nextnonterminal = 1.0 - next_done
            nextvalues = last_value
        else:
            nextnonterminal = 1.0 - dones[:, t + 1]
            nextvalues = values[:, t + 1]
        delta = rewards[:, t] + gamma * nextvalues * nextnonterminal - values[:, t]
        advantages[:, t] = lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
    returns = advantages + values
    return advantages, returns
