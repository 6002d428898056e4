# expect: where the contract says they are DETACHED
"""Right, but the rewards keep their graph (no .detach())."""
import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    chosen_rewards = beta * ((policy_chosen_logps - ref_chosen_logps) * chosen_mask).sum(-1)
    rejected_rewards = beta * ((policy_rejected_logps - ref_rejected_logps) * rejected_mask).sum(-1)
    loss = -F.logsigmoid(chosen_rewards - rejected_rewards).mean()
    return loss, chosen_rewards, rejected_rewards
