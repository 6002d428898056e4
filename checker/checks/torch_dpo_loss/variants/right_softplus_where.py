"""-log σ(z) = softplus(-z), and the masks applied with torch.where."""
import torch
import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    chosen_logratio = torch.where(chosen_mask, policy_chosen_logps - ref_chosen_logps, 0.0).sum(dim=1)
    rejected_logratio = torch.where(rejected_mask, policy_rejected_logps - ref_rejected_logps, 0.0).sum(dim=1)
    loss = F.softplus(-beta * (chosen_logratio - rejected_logratio)).mean()
    with torch.no_grad():
        chosen_rewards = beta * chosen_logratio
        rejected_rewards = beta * rejected_logratio
    return loss, chosen_rewards, rejected_rewards
