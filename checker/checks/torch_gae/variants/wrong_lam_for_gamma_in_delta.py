# expect: lam * next_values
"""The two hyper-parameters mixed up in the TD residual: δ_t = r_t + λ·V(s_(t+1))·(1 - d_t) - V(s_t). The
discount of the next value is γ; λ only weighs the residuals of later steps."""
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    B, T = rewards.shape
    advantages = torch.zeros_like(rewards)
    lastgaelam = torch.zeros(B, dtype=rewards.dtype)
    for t in reversed(range(T)):
        nextvalues = values[:, t + 1] if t < T - 1 else last_value
        nonterminal = 1.0 - dones[:, t]
        delta = rewards[:, t] + lam * nextvalues * nonterminal - values[:, t]
        lastgaelam = delta + gamma * lam * nonterminal * lastgaelam
        advantages[:, t] = lastgaelam
    return advantages, advantages + values
