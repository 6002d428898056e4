# expect: the two operands swapped
import torch


def group_advantages(rewards, group_size, eps=1e-4):
    grouped = rewards.view(-1, group_size)
    return ((grouped - grouped.mean(1, keepdim=True)) / (grouped.std(1, keepdim=True) + eps)).view(-1)


def grpo_loss(logps, old_logps, ref_logps, advantages, mask, clip_eps=0.2, beta=0.04):
    A = advantages.unsqueeze(-1)
    ratio = torch.exp(logps - old_logps)
    surrogate = torch.min(ratio * A, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1
    objective = surrogate + beta * kl
    return -((objective * mask).sum(-1) / mask.sum(-1).clamp(min=1)).mean()
