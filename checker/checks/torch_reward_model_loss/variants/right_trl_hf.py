"""TRL's RewardTrainer.compute_loss (huggingface/trl, trainer/reward_trainer.py) on the pooling of Hugging Face's
sequence-classification models (transformers, LlamaForSequenceClassification.forward): the rightmost non-pad token
as (token_indices * non_pad_mask).argmax(-1), then -logsigmoid(rewards_chosen - rewards_rejected [- margin]).mean().
Adapted minimally: the scores of every position come in (the model's logits), and the attention mask stands for
input_ids != pad_token_id. The contract's ValueError for a margin that is not (B,) is added."""
import torch
from torch import nn


def _pooled(logits, attention_mask):
    batch_size = logits.shape[0]
    non_pad_mask = attention_mask.to(logits.device, torch.int32)
    token_indices = torch.arange(attention_mask.shape[-1], device=logits.device, dtype=torch.int32)
    last_non_pad_token = (token_indices * non_pad_mask).argmax(-1)
    return logits[torch.arange(batch_size, device=logits.device), last_non_pad_token]


def reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin=None):
    if margin is not None and margin.shape != (chosen_scores.shape[0],):
        raise ValueError("margin must have shape (B,)")
    rewards_chosen = _pooled(chosen_scores, chosen_mask)
    rewards_rejected = _pooled(rejected_scores, rejected_mask)
    # calculate loss, optionally modulate with margin
    if margin is not None:
        loss = -nn.functional.logsigmoid(rewards_chosen - rewards_rejected - margin).mean()
    else:
        loss = -nn.functional.logsigmoid(rewards_chosen - rewards_rejected).mean()
    return loss, rewards_chosen, rewards_rejected
