# expect: prompt and padding included
import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    pi_logratios = policy_chosen_logps.sum(-1) - policy_rejected_logps.sum(-1)
    ref_logratios = ref_chosen_logps.sum(-1) - ref_rejected_logps.sum(-1)
    loss = -F.logsigmoid(beta * (pi_logratios - ref_logratios)).mean()
    chosen_rewards = beta * (policy_chosen_logps.sum(-1) - ref_chosen_logps.sum(-1)).detach()
    rejected_rewards = beta * (policy_rejected_logps.sum(-1) - ref_rejected_logps.sum(-1)).detach()
    return loss, chosen_rewards, rejected_rewards
