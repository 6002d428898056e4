# expect: float32
"""The mask cast with .double() for the masked means: on float32 inputs every term comes back float64."""
import torch


def ppo_loss(logprobs, old_logprobs, advantages, values, old_values, returns, logits, mask, clip_eps=0.2,
             clip_value=0.2, vf_coef=0.1, ent_coef=0.01, reduction="token"):
    if reduction not in ("token", "sequence"):
        raise ValueError(reduction)
    m = mask.double()

    def mean(x):
        if reduction == "token":
            return (x * m).sum() / m.sum()
        return ((x * m).sum(dim=1) / m.sum(dim=1)).mean()

    ratio = torch.exp(logprobs - old_logprobs)
    pg_loss = mean(torch.max(-advantages * ratio, -advantages * torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)))
    vpredclipped = torch.clamp(values, old_values - clip_value, old_values + clip_value)
    vf_loss = 0.5 * mean(torch.max((values - returns) ** 2, (vpredclipped - returns) ** 2))
    log_p = torch.log_softmax(logits, dim=-1)
    entropy = mean(-(log_p.exp() * log_p).sum(dim=-1))
    loss = pg_loss + vf_coef * vf_loss - ent_coef * entropy
    return loss, pg_loss, vf_loss, entropy
