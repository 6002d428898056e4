"""The reward model's pairwise loss: Bradley–Terry on the last-token rewards (reference answer).

Shape legend:
    B    comparison pairs (a prompt with a chosen and a rejected response)
    T_c  length of the chosen sequences (prompt + response, padded)
    T_r  length of the rejected sequences (padded)

As TRL's RewardTrainer on Hugging Face's sequence-classification pooling: each sequence's reward is the score at
its last real token (the rightmost position its attention mask keeps, so left and right padding both work), and
loss = -mean(log σ(r_chosen - r_rejected - margin)) (InstructGPT's loss; the margin is Llama 2's).
"""

import torch
import torch.nn.functional as F
from torch import Tensor


def last_token_reward(scores: Tensor, mask: Tensor) -> Tensor:
    """The score at each row's rightmost kept position: (B, T), (B, T) -> (B,)."""
    B, T = scores.shape
    positions = torch.arange(T, device=scores.device)  # (T,)
    last = torch.where(mask, positions, -T).argmax(dim=1)  # (B,) the largest position the mask keeps
    rows = torch.arange(B, device=scores.device)  # (B,)
    return scores[rows, last]  # (B,)


def reward_model_loss(chosen_scores: Tensor, chosen_mask: Tensor, rejected_scores: Tensor, rejected_mask: Tensor,
                      margin: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """(loss, chosen_rewards, rejected_rewards): (), (B,), (B,)."""
    # 1) each sequence's reward: the score at its last real token
    chosen_rewards = last_token_reward(chosen_scores, chosen_mask)  # (B,)
    rejected_rewards = last_token_reward(rejected_scores, rejected_mask)  # (B,)
    # 2) the Bradley–Terry log-likelihood that the chosen one wins, by at least the margin
    if margin is None:
        margin = torch.zeros_like(chosen_rewards)  # (B,) no margin
    elif margin.shape != chosen_rewards.shape:
        raise ValueError(f"margin must have shape (B,) = {chosen_rewards.shape}, got {margin.shape}")
    diff = chosen_rewards - rejected_rewards - margin  # (B,)
    # 3) its negative, averaged over the pairs; logsigmoid stays finite for any difference
    loss = -F.logsigmoid(diff).mean()  # ()
    return loss, chosen_rewards, rejected_rewards
