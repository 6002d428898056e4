"""TRL's concatenated_forward idea: pad chosen and rejected to one length, stack them on the batch axis,
reduce once, split the halves."""
import torch
import torch.nn.functional as F


def _pad_to(x, length, value):
    return F.pad(x, (0, length - x.shape[-1]), value=value)


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    B = chosen_mask.shape[0]
    T = max(chosen_mask.shape[1], rejected_mask.shape[1])
    mask = torch.cat([_pad_to(chosen_mask, T, False), _pad_to(rejected_mask, T, False)])  # (2B, T)
    policy = torch.cat([_pad_to(policy_chosen_logps, T, 0.0), _pad_to(policy_rejected_logps, T, 0.0)])
    ref = torch.cat([_pad_to(ref_chosen_logps, T, 0.0), _pad_to(ref_rejected_logps, T, 0.0)])
    policy_logps = (policy * mask).sum(-1)  # (2B,)
    ref_logps = (ref * mask).sum(-1)
    chosen_logps, rejected_logps = policy_logps[:B], policy_logps[B:]
    ref_chosen, ref_rejected = ref_logps[:B], ref_logps[B:]
    logratios = chosen_logps - rejected_logps
    ref_logratios = ref_chosen - ref_rejected
    losses = -F.logsigmoid(beta * (logratios - ref_logratios))
    chosen_rewards = beta * (chosen_logps - ref_chosen).detach()
    rejected_rewards = beta * (rejected_logps - ref_rejected).detach()
    return losses.mean(), chosen_rewards, rejected_rewards
