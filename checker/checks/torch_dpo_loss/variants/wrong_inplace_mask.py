# expect: your code modified its input
import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    for logps in (policy_chosen_logps, ref_chosen_logps):
        logps.masked_fill_(~chosen_mask, 0.0)
    for logps in (policy_rejected_logps, ref_rejected_logps):
        logps.masked_fill_(~rejected_mask, 0.0)
    chosen = policy_chosen_logps.sum(-1) - ref_chosen_logps.sum(-1)
    rejected = policy_rejected_logps.sum(-1) - ref_rejected_logps.sum(-1)
    loss = -F.logsigmoid(beta * (chosen - rejected)).mean()
    return loss, beta * chosen.detach(), beta * rejected.detach()
