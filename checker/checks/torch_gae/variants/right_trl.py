"""TRL's PPOTrainer (huggingface/trl, ppo_trainer.py), its GAE loop, adapted minimally: TRL's response is one
episode that ends at the last token (nextvalues = 0.0 there, no dones); here the bootstrap last_value takes that
place and (1 - dones[:, t]) cuts both the next value and the recursion."""
import torch


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError("gamma and lam must lie in [0, 1]")
    lastgaelam = 0
    advantages_reversed = []
    gen_length = rewards.shape[1]
    for t in reversed(range(gen_length)):
        nextvalues = values[:, t + 1] if t < gen_length - 1 else last_value
        nonterminal = 1.0 - dones[:, t]
        delta = rewards[:, t] + gamma * nextvalues * nonterminal - values[:, t]
        lastgaelam = delta + gamma * lam * nonterminal * lastgaelam
        advantages_reversed.append(lastgaelam)
    advantages = torch.stack(advantages_reversed[::-1], axis=1)
    returns = advantages + values
    return advantages, returns
