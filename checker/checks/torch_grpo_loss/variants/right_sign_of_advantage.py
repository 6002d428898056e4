"""The clip written by the sign of A (as the PPO paper's figure 1 reads): min(ρ, 1+ε)·A for A >= 0,
max(ρ, 1-ε)·A for A < 0; advantages by a loop over the groups."""
import torch


def group_advantages(rewards, group_size, eps=1e-4):
    out = []
    for start in range(0, rewards.shape[0], group_size):
        r = rewards[start:start + group_size]
        out.append((r - r.mean()) / (r.std() + eps))
    return torch.cat(out)


def grpo_loss(logps, old_logps, ref_logps, advantages, mask, clip_eps=0.2, beta=0.04):
    A = advantages[:, None].expand_as(logps)
    ratio = (logps - old_logps).exp()
    surrogate = torch.where(A >= 0, torch.clamp(ratio, max=1 + clip_eps) * A, torch.clamp(ratio, min=1 - clip_eps) * A)
    log_r = ref_logps - logps
    kl = log_r.exp() - log_r - 1
    objective = torch.where(mask, surrogate - beta * kl, torch.zeros_like(kl))
    lengths = mask.sum(dim=1).clamp(min=1)
    return -(objective.sum(dim=1) / lengths).mean()
