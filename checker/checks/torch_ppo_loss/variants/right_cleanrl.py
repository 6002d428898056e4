"""CleanRL's ppo.py (vwxyzjn/cleanrl), its loss as written: pg_loss1/pg_loss2 with torch.max, v_clipped as
old value + clamp of the difference, 0.5·max of the squared errors, the entropy of a Categorical. Adapted minimally:
CleanRL's flat minibatch is every response token, so .mean() becomes a mean over the mask's True positions (and per
sequence first where reduction="sequence"); the value clip has its own clip_value."""
import torch
from torch.distributions.categorical import Categorical


def ppo_loss(logprobs, old_logprobs, advantages, values, old_values, returns, logits, mask, clip_eps=0.2,
             clip_value=0.2, vf_coef=0.1, ent_coef=0.01, reduction="token"):
    if reduction not in ("token", "sequence"):
        raise ValueError(f"unknown reduction {reduction!r}")
    B = mask.shape[0]
    if reduction == "token":
        groups = [mask]
    else:
        groups = [torch.zeros_like(mask).index_fill_(0, torch.tensor([b]), True) & mask for b in range(B)]
    terms = []
    for keep in groups:
        newlogprob, b_logprobs, mb_advantages = logprobs[keep], old_logprobs[keep], advantages[keep]
        newvalue, b_values, b_returns = values[keep], old_values[keep], returns[keep]
        logratio = newlogprob - b_logprobs
        ratio = logratio.exp()
        pg_loss1 = -mb_advantages * ratio
        pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
        pg_loss = torch.max(pg_loss1, pg_loss2).mean()
        v_loss_unclipped = (newvalue - b_returns) ** 2
        v_clipped = b_values + torch.clamp(newvalue - b_values, -clip_value, clip_value)
        v_loss_clipped = (v_clipped - b_returns) ** 2
        v_loss_max = torch.max(v_loss_unclipped, v_loss_clipped)
        v_loss = 0.5 * v_loss_max.mean()
        entropy_loss = Categorical(logits=logits[keep]).entropy().mean()
        terms.append(torch.stack([pg_loss, v_loss, entropy_loss]))
    pg_loss, v_loss, entropy_loss = torch.stack(terms).mean(dim=0)
    loss = pg_loss - ent_coef * entropy_loss + v_loss * vf_coef
    return loss, pg_loss, v_loss, entropy_loss
