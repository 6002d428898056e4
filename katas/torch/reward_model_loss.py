"""The reward model's pairwise loss (Bradley–Terry) at the last token, from scratch.

Shape legend:
    B    comparison pairs: one prompt, a chosen (preferred) and a rejected response
    T_c  length of the chosen sequences (prompt + response, padded)
    T_r  length of the rejected sequences (padded); T_c and T_r may differ

A reward model is a language model whose head gives one scalar score per position. Implement its
training loss (Ouyang et al. 2022, "InstructGPT", eq. 1; Touvron et al. 2023, "Llama 2", eq. 2 for
the margin), as TRL's RewardTrainer computes it on top of Hugging Face's sequence-classification
models:

1. Each sequence's reward is its score at its LAST REAL TOKEN: the rightmost position where its
   attention mask is True. Sequences may be padded on the right OR on the left (even within one
   batch), so the last real token is not always at index T - 1, nor at mask.sum() - 1.
2. loss = mean over the B pairs of  -log σ(r_chosen - r_rejected - margin),
   computed stably (finite for any difference, e.g. ±1000), with margin = 0 when None.

Arguments:
    chosen_scores    (B, T_c) float: the reward head's score at every position of the chosen sequences
    chosen_mask      (B, T_c) bool: the attention mask, True at real tokens; every row has at least one
    rejected_scores  (B, T_r) float: the same for the rejected sequences
    rejected_mask    (B, T_r) bool
    margin           (B,) float, or None: Llama 2's margin per pair (larger where the preference is
                     stronger); None means no margin. A margin of any other shape ((B, 1), a 0-dim
                     tensor) raises ValueError: broadcast against (B,) it would silently pair every
                     chosen reward with every rejected one
returns (loss, chosen_rewards, rejected_rewards): a 0-dim tensor and two (B,) tensors, all of the
scores' dtype; the loss is differentiable in both scores (and the rewards keep their graph).

Rules: do not modify the inputs.
Off limits: trl, transformers.
"""

import torch
from torch import Tensor


def reward_model_loss(chosen_scores: Tensor, chosen_mask: Tensor, rejected_scores: Tensor, rejected_mask: Tensor,
                      margin: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    raise NotImplementedError("write reward_model_loss: the last real token's score, then -logsigmoid of the difference")
