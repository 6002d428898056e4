# expect: rejected_rewards - chosen_rewards
"""The difference the wrong way round: the loss rewards the rejected response."""
import torch
import torch.nn.functional as F


def reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin=None):
    if margin is not None and margin.shape != (chosen_scores.shape[0],):
        raise ValueError("margin must have shape (B,)")
    def pick(scores, mask):
        last = (torch.arange(scores.shape[1]) * mask).argmax(dim=1)
        return scores[torch.arange(scores.shape[0]), last]

    rewards_chosen = pick(chosen_scores, chosen_mask)
    rewards_rejected = pick(rejected_scores, rejected_mask)
    diff = rewards_rejected - rewards_chosen
    if margin is not None:
        diff = diff - margin
    return -F.logsigmoid(diff).mean(), rewards_chosen, rewards_rejected
