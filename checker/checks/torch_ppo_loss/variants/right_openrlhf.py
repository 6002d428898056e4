"""OpenRLHF (OpenRLHF/OpenRLHF, models/loss.py): PolicyLoss and ValueLoss as written, with its masked_mean(tensor,
mask, dim). Adapted minimally: OpenRLHF averages per sequence (masked_mean(..., dim=-1).mean()), this contract's
reduction="sequence"; reduction="token" passes dim=None, its whole-batch mean. The entropy is
torch.distributions.Categorical's, and the three terms are combined as CleanRL combines them."""
import torch


def masked_mean(tensor, mask, dim=None):
    if mask is None:
        return tensor.mean(axis=dim)
    return (tensor * mask).sum(axis=dim) / mask.sum(axis=dim)


def _reduce(loss, action_mask, reduction):
    if reduction == "sequence":
        return masked_mean(loss, action_mask, dim=-1).mean()
    return masked_mean(loss, action_mask, dim=None)


def policy_loss(log_probs, old_log_probs, advantages, action_mask, clip_eps, reduction):
    ratio = (log_probs - old_log_probs).exp()
    surr1 = ratio * advantages
    surr2 = ratio.clamp(1 - clip_eps, 1 + clip_eps) * advantages
    loss = -torch.min(surr1, surr2)
    return _reduce(loss, action_mask, reduction)


def value_loss(values, old_values, returns, action_mask, clip_eps, reduction):
    values_clipped = old_values + (values - old_values).clamp(-clip_eps, clip_eps)
    surr1 = (values_clipped - returns) ** 2
    surr2 = (values - returns) ** 2
    loss = torch.max(surr1, surr2)
    loss = _reduce(loss, action_mask, reduction)
    return 0.5 * loss


def ppo_loss(logprobs, old_logprobs, advantages, values, old_values, returns, logits, mask, clip_eps=0.2,
             clip_value=0.2, vf_coef=0.1, ent_coef=0.01, reduction="token"):
    if reduction not in ("token", "sequence"):
        raise ValueError(f"unknown reduction {reduction!r}")
    action_mask = mask.to(logprobs.dtype)
    pg_loss = policy_loss(logprobs, old_logprobs, advantages, action_mask, clip_eps, reduction)
    vf_loss = value_loss(values, old_values, returns, action_mask, clip_value, reduction)
    entropy = _reduce(torch.distributions.Categorical(logits=logits).entropy(), action_mask, reduction)
    return pg_loss + vf_coef * vf_loss - ent_coef * entropy, pg_loss, vf_loss, entropy
