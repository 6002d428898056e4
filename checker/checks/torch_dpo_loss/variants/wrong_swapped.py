# expect: the two operands swapped
import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    pi_c = (policy_chosen_logps * chosen_mask).sum(-1)
    pi_r = (policy_rejected_logps * rejected_mask).sum(-1)
    ref_c = (ref_chosen_logps * chosen_mask).sum(-1)
    ref_r = (ref_rejected_logps * rejected_mask).sum(-1)
    # log-ratio of the reference over the policy: the subtraction the wrong way round
    logits = (ref_c - pi_c) - (ref_r - pi_r)
    loss = -F.logsigmoid(beta * logits).mean()
    return loss, beta * (pi_c - ref_c).detach(), beta * (pi_r - ref_r).detach()
