"""verl (volcengine/verl, trainer/ppo/core_algos.py and utils/torch_functional.py): compute_policy_loss,
compute_value_loss, agg_loss and entropy_from_logits as written. Adapted minimally: the symmetric clip range
(cliprange_low = cliprange_high = clip_eps), verl's dual clip for negative advantages left out (this contract has no
clip_ratio_c), loss_agg_mode "token-mean" for reduction="token" and "seq-mean-token-mean" for "sequence"."""
import torch


def masked_mean(values, mask, axis=None):
    return (values * mask).sum(axis=axis) / mask.sum(axis=axis)


def agg_loss(loss_mat, loss_mask, loss_agg_mode):
    if loss_agg_mode == "token-mean":
        loss = masked_mean(loss_mat, loss_mask)
    elif loss_agg_mode == "seq-mean-token-mean":
        seq_losses = torch.sum(loss_mat * loss_mask, dim=-1) / torch.sum(loss_mask, dim=-1)
        loss = torch.mean(seq_losses)
    else:
        raise ValueError(f"Invalid loss_agg_mode: {loss_agg_mode}")
    return loss


def entropy_from_logits(logits):
    pd = torch.nn.functional.softmax(logits, dim=-1)
    entropy = torch.logsumexp(logits, dim=-1) - torch.sum(pd * logits, dim=-1)
    return entropy


def compute_policy_loss(old_log_prob, log_prob, advantages, response_mask, cliprange, loss_agg_mode):
    negative_approx_kl = log_prob - old_log_prob
    ratio = torch.exp(negative_approx_kl)
    pg_losses1 = -advantages * ratio
    pg_losses2 = -advantages * torch.clamp(ratio, 1 - cliprange, 1 + cliprange)
    clip_pg_losses1 = torch.maximum(pg_losses1, pg_losses2)
    return agg_loss(loss_mat=clip_pg_losses1, loss_mask=response_mask, loss_agg_mode=loss_agg_mode)


def compute_value_loss(vpreds, returns, values, response_mask, cliprange_value, loss_agg_mode):
    vpredclipped = torch.clamp(vpreds, values - cliprange_value, values + cliprange_value)
    vf_losses1 = (vpreds - returns) ** 2
    vf_losses2 = (vpredclipped - returns) ** 2
    clipped_vf_losses = torch.max(vf_losses1, vf_losses2)
    return 0.5 * agg_loss(loss_mat=clipped_vf_losses, loss_mask=response_mask, loss_agg_mode=loss_agg_mode)


def ppo_loss(logprobs, old_logprobs, advantages, values, old_values, returns, logits, mask, clip_eps=0.2,
             clip_value=0.2, vf_coef=0.1, ent_coef=0.01, reduction="token"):
    modes = {"token": "token-mean", "sequence": "seq-mean-token-mean"}
    if reduction not in modes:
        raise ValueError(f"unknown reduction {reduction!r}")
    mode = modes[reduction]
    response_mask = mask.to(logprobs.dtype)
    pg_loss = compute_policy_loss(old_logprobs, logprobs, advantages, response_mask, clip_eps, mode)
    vf_loss = compute_value_loss(values, returns, old_values, response_mask, clip_value, mode)
    entropy = agg_loss(entropy_from_logits(logits), response_mask, mode)
    return pg_loss + vf_coef * vf_loss - ent_coef * entropy, pg_loss, vf_loss, entropy
