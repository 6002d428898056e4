# expect: rounds σ(z) to 0
import torch


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    chosen = ((policy_chosen_logps - ref_chosen_logps) * chosen_mask).sum(-1)
    rejected = ((policy_rejected_logps - ref_rejected_logps) * rejected_mask).sum(-1)
    loss = -torch.log(torch.sigmoid(beta * (chosen - rejected))).mean()
    return loss, beta * chosen.detach(), beta * rejected.detach()
