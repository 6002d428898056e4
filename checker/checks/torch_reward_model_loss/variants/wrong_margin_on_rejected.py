# expect: margin
"""The margin taken off the REJECTED reward, r_c - (r_r - m) = r_c - r_r + m: the chosen one then needs less, not
more, than the plain comparison."""
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
    if margin is None:
        margin = torch.zeros_like(rewards_chosen)
    return -F.logsigmoid(rewards_chosen - (rewards_rejected - margin)).mean(), rewards_chosen, rewards_rejected
