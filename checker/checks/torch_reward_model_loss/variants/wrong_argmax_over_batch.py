# expect: dim
"""The last real token searched along the batch axis: argmax(dim=0) gives one index per position, not one per row."""
import torch
import torch.nn.functional as F


def reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin=None):
    if margin is not None and margin.shape != (chosen_scores.shape[0],):
        raise ValueError("margin must have shape (B,)")
    def pick(scores, mask):
        positions = torch.arange(scores.shape[1]).unsqueeze(0)
        last = (positions * mask).argmax(dim=0)
        return scores[torch.arange(scores.shape[0]), last]

    rewards_chosen = pick(chosen_scores, chosen_mask)
    rewards_rejected = pick(rejected_scores, rejected_mask)
    diff = rewards_chosen - rewards_rejected
    if margin is not None:
        diff = diff - margin
    return -F.logsigmoid(diff).mean(), rewards_chosen, rewards_rejected
