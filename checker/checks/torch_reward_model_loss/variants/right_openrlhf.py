"""OpenRLHF (OpenRLHF/OpenRLHF): the reward model's last-token pick from models/model.py (eos_indices from the
flipped attention mask) and models/loss.py's PairWiseLoss, -logsigmoid(chosen_reward - reject_reward - margin),
averaged. Adapted minimally: margin None means 0, as PairWiseLoss's default. The contract's ValueError for a margin that is not (B,) is added."""
import torch
import torch.nn.functional as F


def _reward(values, attention_mask):
    eos_indices = attention_mask.size(1) - 1 - attention_mask.long().fliplr().argmax(dim=1, keepdim=True)
    return values.gather(dim=1, index=eos_indices).squeeze(1)


def pairwise_loss(chosen_reward, reject_reward, margin=None):
    if margin is not None:
        loss = -F.logsigmoid(chosen_reward - reject_reward - margin)
    else:
        loss = -F.logsigmoid(chosen_reward - reject_reward)
    return loss.mean()


def reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin=None):
    if margin is not None and margin.shape != (chosen_scores.shape[0],):
        raise ValueError("margin must have shape (B,)")
    chosen_reward = _reward(chosen_scores, chosen_mask)
    reject_reward = _reward(rejected_scores, rejected_mask)
    return pairwise_loss(chosen_reward, reject_reward, margin), chosen_reward, reject_reward
