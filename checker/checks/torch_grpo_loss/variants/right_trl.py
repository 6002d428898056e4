"""TRL's GRPOTrainer, names adapted: advantages by view(-1, G) and repeat_interleave, coef_1/coef_2,
-torch.min of the two per-token losses, loss_type="grpo"."""
import torch


def group_advantages(rewards, group_size, eps=1e-4):
    mean_grouped_rewards = rewards.view(-1, group_size).mean(dim=1)
    std_grouped_rewards = rewards.view(-1, group_size).std(dim=1)
    mean_grouped_rewards = mean_grouped_rewards.repeat_interleave(group_size, dim=0)
    std_grouped_rewards = std_grouped_rewards.repeat_interleave(group_size, dim=0)
    return (rewards - mean_grouped_rewards) / (std_grouped_rewards + eps)


def grpo_loss(logps, old_logps, ref_logps, advantages, mask, clip_eps=0.2, beta=0.04):
    completion_mask = mask.float().to(logps.dtype)
    per_token_kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1
    coef_1 = torch.exp(logps - old_logps)
    coef_2 = torch.clamp(coef_1, 1 - clip_eps, 1 + clip_eps)
    per_token_loss1 = coef_1 * advantages.unsqueeze(1)
    per_token_loss2 = coef_2 * advantages.unsqueeze(1)
    per_token_loss = -torch.min(per_token_loss1, per_token_loss2)
    if beta != 0.0:
        per_token_loss = per_token_loss + beta * per_token_kl
    return ((per_token_loss * completion_mask).sum(-1) / completion_mask.sum(-1).clamp(min=1.0)).mean()
