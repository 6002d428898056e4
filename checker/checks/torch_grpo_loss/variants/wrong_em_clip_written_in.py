# expect: an argument replaced by a value written into the code
"""The clip range is written in as [0.8, 1.2] whatever clip_eps the caller passes (error model)."""
import torch
from torch import Tensor


def group_advantages(rewards: Tensor, group_size: int, eps: float = 1e-4) -> Tensor:
    r = rewards.reshape(-1, group_size)
    return ((r - r.mean(dim=1, keepdim=True)) / (r.std(dim=1, keepdim=True) + eps)).reshape(-1)


def grpo_loss(logps: Tensor, old_logps: Tensor, ref_logps: Tensor, advantages: Tensor, mask: Tensor,
              clip_eps: float = 0.2, beta: float = 0.04) -> Tensor:
    adv = advantages.unsqueeze(1)
    ratio = (logps - old_logps).exp()
    objective = torch.minimum(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv)
    kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1
    loss_tok = beta * kl - objective
    w = mask.float().to(loss_tok.dtype)
    return ((loss_tok * w).sum(-1) / w.sum(-1).clamp(min=1)).mean()
