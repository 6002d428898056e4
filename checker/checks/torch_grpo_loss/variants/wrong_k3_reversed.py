# expect: the two operands swapped
import torch
from torch import Tensor


def group_advantages(rewards: Tensor, group_size: int, eps: float = 1e-4) -> Tensor:
    r = rewards.reshape(-1, group_size)                     # (P, G)
    a = (r - r.mean(dim=1, keepdim=True)) / (r.std(dim=1, keepdim=True, correction=1) + eps)
    return a.reshape(-1)                                    # (N,)


def grpo_loss(logps: Tensor, old_logps: Tensor, ref_logps: Tensor, advantages: Tensor, mask: Tensor,
              clip_eps: float = 0.2, beta: float = 0.04) -> Tensor:
    A = advantages[:, None]                                 # (N, 1)
    ratio = (logps - old_logps).exp()                       # (N, T)
    surr = torch.minimum(ratio * A, ratio.clamp(1 - clip_eps, 1 + clip_eps) * A)
    d = logps - ref_logps
    kl = d.exp() - d - 1
    per_token = torch.where(mask, -(surr - beta * kl), torch.zeros_like(surr))
    lengths = mask.sum(dim=1).clamp(min=1)
    return (per_token.sum(dim=1) / lengths).mean()
