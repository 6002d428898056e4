# expect: modified its input
"""Padding scores zeroed in the caller's tensors (masked_fill_) before the pick: right numbers, ruined inputs."""
import torch
import torch.nn.functional as F


def reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin=None):
    if margin is not None and margin.shape != (chosen_scores.shape[0],):
        raise ValueError("margin must have shape (B,)")
    chosen_scores.masked_fill_(~chosen_mask, 0.0)
    rejected_scores.masked_fill_(~rejected_mask, 0.0)
    def pick(scores, mask):
        last = (torch.arange(scores.shape[1]) * mask).argmax(dim=1)
        return scores[torch.arange(scores.shape[0]), last]

    rewards_chosen = pick(chosen_scores, chosen_mask)
    rewards_rejected = pick(rejected_scores, rejected_mask)
    if margin is not None:
        loss = -F.logsigmoid(rewards_chosen - rewards_rejected - margin).mean()
    else:
        loss = -F.logsigmoid(rewards_chosen - rewards_rejected).mean()
    return loss, rewards_chosen, rewards_rejected
