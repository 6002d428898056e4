# expect: a length-normalised log π
"""Averages each sequence's log-probabilities over its response tokens instead of summing them."""
import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    def seq(logps, mask):
        return (logps * mask).sum(-1) / mask.sum(-1)

    chosen = seq(policy_chosen_logps, chosen_mask) - seq(ref_chosen_logps, chosen_mask)
    rejected = seq(policy_rejected_logps, rejected_mask) - seq(ref_rejected_logps, rejected_mask)
    loss = -F.logsigmoid(beta * (chosen - rejected)).mean()
    return loss, beta * chosen.detach(), beta * rejected.detach()
