"""DeepSeekMath's formulas as written: π_θ/π_θ_old as a quotient of probabilities, KL as
π_ref/π_θ - log(π_ref/π_θ) - 1; a loop over the completions for 1/|o_i| Σ_t."""
import torch


def group_advantages(rewards, group_size, eps=1e-4):
    groups = rewards.reshape(-1, group_size)
    centred = groups - groups.mean(dim=-1, keepdim=True)
    std = torch.sqrt((centred ** 2).sum(dim=-1, keepdim=True) / (group_size - 1))
    return (centred / (std + eps)).reshape(-1)


def grpo_loss(logps, old_logps, ref_logps, advantages, mask, clip_eps=0.2, beta=0.04):
    losses = []
    for i in range(logps.shape[0]):
        keep = mask[i]
        ratio = torch.exp(logps[i][keep]) / torch.exp(old_logps[i][keep])
        A = advantages[i]
        surrogate = torch.minimum(ratio * A, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
        ref_over_pi = torch.exp(ref_logps[i][keep] - logps[i][keep])
        kl = ref_over_pi - torch.log(ref_over_pi) - 1
        objective = surrogate - beta * kl
        losses.append(-objective.sum() / max(int(keep.sum()), 1))
    return torch.stack(losses).mean()
