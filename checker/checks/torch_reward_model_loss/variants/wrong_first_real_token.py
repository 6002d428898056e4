# expect: where(mask, mask, -T)
"""The argmax of the mask itself: the FIRST True, the first real token (the prompt's first word), not the last."""
import torch
import torch.nn.functional as F


def reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin=None):
    if margin is not None and margin.shape != (chosen_scores.shape[0],):
        raise ValueError("margin must have shape (B,)")
    def pick(scores, mask):
        return scores[torch.arange(scores.shape[0]), mask.int().argmax(dim=1)]

    rewards_chosen = pick(chosen_scores, chosen_mask)
    rewards_rejected = pick(rejected_scores, rejected_mask)
    if margin is not None:
        loss = -F.logsigmoid(rewards_chosen - rewards_rejected - margin).mean()
    else:
        loss = -F.logsigmoid(rewards_chosen - rewards_rejected).mean()
    return loss, rewards_chosen, rewards_rejected
