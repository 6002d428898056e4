# expect: the implicit reward is β · (log π(y) - log π_ref(y))
import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    chosen = ((policy_chosen_logps - ref_chosen_logps) * chosen_mask).sum(-1)
    rejected = ((policy_rejected_logps - ref_rejected_logps) * rejected_mask).sum(-1)
    loss = -F.logsigmoid(beta * (chosen - rejected)).mean()
    return loss, chosen.detach(), rejected.detach()
