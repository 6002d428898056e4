# expect: (B,)
"""gather without the squeeze: rewards of shape (B, 1), and a loss over a (B, B) grid of differences once a margin broadcasts."""
import torch
import torch.nn.functional as F


def reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin=None):
    if margin is not None and margin.shape != (chosen_scores.shape[0],):
        raise ValueError("margin must have shape (B,)")
    rewards_chosen = chosen_scores.gather(1, (torch.arange(chosen_scores.shape[1]) * chosen_mask).argmax(1, keepdim=True))
    rewards_rejected = rejected_scores.gather(1, (torch.arange(rejected_scores.shape[1]) * rejected_mask).argmax(1, keepdim=True))
    if margin is not None:
        loss = -F.logsigmoid(rewards_chosen - rewards_rejected - margin).mean()
    else:
        loss = -F.logsigmoid(rewards_chosen - rewards_rejected).mean()
    return loss, rewards_chosen, rewards_rejected
