# expect: the clip is applied to the product ratio·A
"""The clip is applied to ratio·A, clamp(ratio * A, 1 - ε, 1 + ε), instead of to the ratio."""
import torch


def group_advantages(rewards, group_size, eps=1e-4):
    grouped = rewards.view(-1, group_size)
    mean = grouped.mean(dim=1, keepdim=True)
    std = grouped.std(dim=1, keepdim=True)
    return ((grouped - mean) / (std + eps)).view(-1)


def grpo_loss(logps, old_logps, ref_logps, advantages, mask, clip_eps=0.2, beta=0.04):
    A = advantages.unsqueeze(1)
    ratio = torch.exp(logps - old_logps)
    pg = ratio * A
    surrogate = torch.min(pg, torch.clamp(pg, 1 - clip_eps, 1 + clip_eps))
    kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1
    per_token = -(surrogate - beta * kl)
    m = mask.float().to(per_token.dtype)
    return ((per_token * m).sum(dim=1) / m.sum(dim=1).clamp(min=1)).mean()
