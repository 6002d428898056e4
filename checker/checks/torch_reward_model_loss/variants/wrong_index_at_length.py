# expect: IndexError
"""The length used as the last token's index, mask.sum(1): one past the last real token of a right-padded row, and
out of range for a row without padding."""
import torch
import torch.nn.functional as F


def reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin=None):
    if margin is not None and margin.shape != (chosen_scores.shape[0],):
        raise ValueError("margin must have shape (B,)")
    rewards_chosen = chosen_scores[torch.arange(chosen_scores.shape[0]), chosen_mask.sum(1)]
    rewards_rejected = rejected_scores[torch.arange(rejected_scores.shape[0]), rejected_mask.sum(1)]
    diff = rewards_chosen - rewards_rejected
    if margin is not None:
        diff = diff - margin
    return -F.logsigmoid(diff).mean(), rewards_chosen, rewards_rejected
