# expect: reduction
"""The two readings exchanged: per sequence where "token" is asked, per token where "sequence" is."""
import torch


def masked_mean(values, mask, axis=None):
    m = mask.to(values.dtype)
    if axis is not None:
        return (values * m).sum(axis=axis) / m.sum(axis=axis)
    return (values * m).sum() / m.sum()


def reduce(x, mask, reduction):
    if reduction not in ("token", "sequence"):
        raise ValueError(reduction)
    return masked_mean(x, mask) if reduction == "token" else masked_mean(x, mask, axis=1).mean()


def ppo_loss(logprobs, old_logprobs, advantages, values, old_values, returns, logits, mask, clip_eps=0.2,
             clip_value=0.2, vf_coef=0.1, ent_coef=0.01, reduction="token"):
    other = {'token': 'sequence', 'sequence': 'token'}.get(reduction, reduction)
    ratio = torch.exp(logprobs - old_logprobs)
    pg_loss = reduce(torch.max(-advantages * ratio, -advantages * torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)),
                     mask, other)
    vpredclipped = torch.clamp(values, old_values - clip_value, old_values + clip_value)
    vf_loss = 0.5 * reduce(torch.max((values - returns) ** 2, (vpredclipped - returns) ** 2), mask, other)
    prob_dist = torch.softmax(logits, dim=-1)
    entropy = reduce(torch.logsumexp(logits, dim=-1) - torch.sum(prob_dist * logits, dim=-1), mask, other)
    loss = pg_loss + vf_coef * vf_loss - ent_coef * entropy
    return loss, pg_loss, vf_loss, entropy
