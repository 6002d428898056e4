# expect: wrong with a batch of 1
"""Sequence log-probabilities summed with keepdim=True, then squeezed back: squeeze() also drops the batch axis
when the batch holds one pair, and the rewards come back 0-d."""
import torch.nn.functional as F


def _seq(logps, mask):
    return (logps * mask).sum(dim=-1, keepdim=True).squeeze()


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    chosen = _seq(policy_chosen_logps, chosen_mask) - _seq(ref_chosen_logps, chosen_mask)
    rejected = _seq(policy_rejected_logps, rejected_mask) - _seq(ref_rejected_logps, rejected_mask)
    loss = -F.logsigmoid(beta * (chosen - rejected)).mean()
    return loss, (beta * chosen).detach(), (beta * rejected).detach()
