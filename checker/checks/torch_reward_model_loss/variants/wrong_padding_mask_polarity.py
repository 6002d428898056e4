# expect: mask
"""The mask read as a PADDING mask (True at padding, as nn.MultiheadAttention's key_padding_mask): the rightmost
True is then the last pad, or index 0 in a row without padding."""
import torch
import torch.nn.functional as F


def reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin=None):
    if margin is not None and margin.shape != (chosen_scores.shape[0],):
        raise ValueError("margin must have shape (B,)")
    def pick(scores, mask):
        last = (torch.arange(scores.shape[1]) * ~mask).argmax(dim=1)
        return scores[torch.arange(scores.shape[0]), last]

    rewards_chosen = pick(chosen_scores, chosen_mask)
    rewards_rejected = pick(rejected_scores, rejected_mask)
    diff = rewards_chosen - rewards_rejected
    if margin is not None:
        diff = diff - margin
    return -F.logsigmoid(diff).mean(), rewards_chosen, rewards_rejected
