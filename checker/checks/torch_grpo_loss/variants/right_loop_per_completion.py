import torch
from torch import Tensor


def group_advantages(rewards: Tensor, group_size: int, eps: float = 1e-4) -> Tensor:
    out = torch.empty_like(rewards)
    for start in range(0, rewards.numel(), group_size):
        g = rewards[start:start + group_size]
        out[start:start + group_size] = (g - g.mean()) / (g.std() + eps)
    return out


def grpo_loss(logps: Tensor, old_logps: Tensor, ref_logps: Tensor, advantages: Tensor, mask: Tensor,
              clip_eps: float = 0.2, beta: float = 0.04) -> Tensor:
    total = logps.new_zeros(())
    for i in range(logps.shape[0]):
        m = mask[i]
        lp, old, ref = logps[i][m], old_logps[i][m], ref_logps[i][m]
        if lp.numel() == 0:
            continue
        ratio = torch.exp(lp - old)
        unclipped = ratio * advantages[i]
        clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages[i]
        kl = torch.exp(ref - lp) - (ref - lp) - 1
        total = total + (-(torch.min(unclipped, clipped) - beta * kl)).mean()
    return total / logps.shape[0]
