# expect: mean and std of the WHOLE batch
import torch


def group_advantages(rewards, group_size, eps=1e-4):
    return (rewards - rewards.mean()) / (rewards.std() + eps)


def grpo_loss(logps, old_logps, ref_logps, advantages, mask, clip_eps=0.2, beta=0.04):
    A = advantages.unsqueeze(-1)
    ratio = torch.exp(logps - old_logps)
    surrogate = torch.min(ratio * A, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1
    per_token = -(surrogate - beta * kl)
    return ((per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1)).mean()
