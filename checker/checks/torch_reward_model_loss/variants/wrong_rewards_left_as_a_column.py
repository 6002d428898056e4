# expect: more dimension of size 1
"""The last real token's score is read with gather(1, index[:, None]), and the (B, 1) column it gives is returned as
it is: the loss, taken from the same column, is right; chosen_rewards and rejected_rewards have a stray axis."""
import torch
import torch.nn.functional as F


def last_token_reward(scores, mask):
    last = mask.long().cumsum(1).argmax(1)  # the first position holding the row's count of kept tokens
    return scores.gather(1, last[:, None])


def reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin=None):
    chosen = last_token_reward(chosen_scores, chosen_mask)
    rejected = last_token_reward(rejected_scores, rejected_mask)
    if margin is not None and margin.shape != chosen.shape[:1]:
        raise ValueError("margin must have shape (B,)")
    diff = (chosen - rejected).squeeze(1) - (0 if margin is None else margin)
    return -F.logsigmoid(diff).mean(), chosen, rejected
