# expect: rounds σ(z) to 0
import torch


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    chosen = ((policy_chosen_logps - ref_chosen_logps) * chosen_mask).sum(-1)
    rejected = ((policy_rejected_logps - ref_rejected_logps) * rejected_mask).sum(-1)
    z = beta * (chosen - rejected)
    loss = torch.log1p(torch.exp(-z)).mean()  # -log σ(z) = log(1 + e^-z), overflowing for z << 0
    return loss, beta * chosen.detach(), beta * rejected.detach()
