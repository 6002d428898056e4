# expect: the population std
import torch


def group_advantages(rewards, group_size, eps=1e-4):
    grouped = rewards.view(-1, group_size)
    mean = grouped.mean(dim=1, keepdim=True)
    std = ((grouped - mean) ** 2).mean(dim=1, keepdim=True).sqrt()
    return ((grouped - mean) / (std + eps)).flatten()


def grpo_loss(logps, old_logps, ref_logps, advantages, mask, clip_eps=0.2, beta=0.04):
    A = advantages.unsqueeze(-1)
    ratio = torch.exp(logps - old_logps)
    surrogate = torch.min(ratio * A, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1
    per_token = -(surrogate - beta * kl)
    return ((per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1)).mean()
