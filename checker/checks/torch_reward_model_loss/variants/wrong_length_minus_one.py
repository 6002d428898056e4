# expect: length minus one
"""The reward at index mask.sum() - 1, the length minus one: right only under right padding."""
import torch
import torch.nn.functional as F


def reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin=None):
    if margin is not None and margin.shape != (chosen_scores.shape[0],):
        raise ValueError("margin must have shape (B,)")
    rewards_chosen = chosen_scores.gather(1, (chosen_mask.sum(-1, keepdim=True) - 1)).squeeze(1)
    rewards_rejected = rejected_scores.gather(1, (rejected_mask.sum(-1, keepdim=True) - 1)).squeeze(1)
    if margin is not None:
        loss = -F.logsigmoid(rewards_chosen - rewards_rejected - margin).mean()
    else:
        loss = -F.logsigmoid(rewards_chosen - rewards_rejected).mean()
    return loss, rewards_chosen, rewards_rejected
