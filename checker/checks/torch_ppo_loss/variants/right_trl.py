"""TRL's PPOTrainer (huggingface/trl, trainer/ppo_trainer.py and trainer/utils.py), its minibatch loss as written:
masked_mean, vpredclipped, vf_losses1/2, pg_losses/pg_losses2 and the entropy from the logits. Adapted minimally: the
mask passed is the response mask (TRL passes ~padding_mask), CleanRL's entropy bonus is subtracted (TRL only logs the
entropy), and reduction="sequence" uses masked_mean along axis 1, then the mean over the rows."""
import torch
import torch.nn.functional as F


def masked_mean(values, mask, axis=None):
    """Compute mean of tensor with a masked values."""
    if axis is not None:
        return (values * mask).sum(axis=axis) / mask.sum(axis=axis)
    else:
        return (values * mask).sum() / mask.sum()


def ppo_loss(logprobs, old_logprobs, advantages, values, old_values, returns, logits, mask, clip_eps=0.2,
             clip_value=0.2, vf_coef=0.1, ent_coef=0.01, reduction="token"):
    if reduction not in ("token", "sequence"):
        raise ValueError(f"unknown reduction {reduction!r}")

    def reduce(x):
        return masked_mean(x, mask) if reduction == "token" else masked_mean(x, mask, axis=1).mean()

    new_logprobs, mb_logprobs, mb_advantage, vpred, mb_values, mb_return = (
        logprobs, old_logprobs, advantages, values, old_values, returns)
    vpredclipped = torch.clamp(vpred, mb_values - clip_value, mb_values + clip_value)
    vf_losses1 = torch.square(vpred - mb_return)
    vf_losses2 = torch.square(vpredclipped - mb_return)
    vf_loss_max = torch.max(vf_losses1, vf_losses2)
    vf_loss = 0.5 * reduce(vf_loss_max)
    logprobs_diff = new_logprobs - mb_logprobs
    ratio = torch.exp(logprobs_diff)
    pg_losses = -mb_advantage * ratio
    pg_losses2 = -mb_advantage * torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps)
    pg_loss_max = torch.max(pg_losses, pg_losses2)
    pg_loss = reduce(pg_loss_max)
    prob_dist = F.softmax(logits, dim=-1)
    entropy = reduce(torch.logsumexp(logits, dim=-1) - torch.sum(prob_dist * logits, dim=-1))
    loss = pg_loss + vf_coef * vf_loss - ent_coef * entropy
    return loss, pg_loss, vf_loss, entropy
