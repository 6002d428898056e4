# expect: your rewards ignore the reference
"""The loss is DPO's, but the rewards logged beside it are β times the policy's summed log-probabilities alone: the
reference's are left out of them, so a reward says how likely the policy finds a response, not how much more than
the SFT model does."""
import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    pc = (policy_chosen_logps * chosen_mask).sum(-1)
    pr = (policy_rejected_logps * rejected_mask).sum(-1)
    rc = (ref_chosen_logps * chosen_mask).sum(-1)
    rr = (ref_rejected_logps * rejected_mask).sum(-1)
    loss = -F.logsigmoid(beta * ((pc - rc) - (pr - rr))).mean()
    return loss, (beta * pc).detach(), (beta * pr).detach()
