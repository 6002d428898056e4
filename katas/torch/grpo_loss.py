"""GRPO's objective (Group Relative Policy Optimization, DeepSeekMath), from scratch.

Shape legend:
    P    number of prompts in the batch
    G    group_size: completions sampled per prompt (>= 2)
    N    = P · G completions; the G completions of a prompt are CONTIGUOUS (rows p·G .. p·G + G - 1)
    T    completion length (padded)

Implement the two halves of GRPO (Shao et al. 2024, "DeepSeekMath", §4.1, eq. 3), as TRL's
GRPOTrainer computes them:

1. group_advantages(rewards, group_size, eps=1e-4): each completion's reward normalised within
   its own group, the same advantage for every token of the completion:

       A_i = (r_i - mean(group)) / (std(group) + eps)

   std is torch's default, the UNBIASED sample standard deviation (divides by G - 1), as TRL's
   rewards.view(-1, G).std(dim=1); eps is added to the std, outside the square root, so that a
   group whose rewards are all equal gets A = 0 (not NaN).

2. grpo_loss(logps, old_logps, ref_logps, advantages, mask, clip_eps=0.2, beta=0.04), per token:

       ratio = exp(logps - old_logps)                                  π_θ / π_θ_old
       surr  = min(ratio · A, clip(ratio, 1 - clip_eps, 1 + clip_eps) · A)   PPO's clipped objective
       kl    = exp(ref_logps - logps) - (ref_logps - logps) - 1      the k3 estimator of KL(π_θ ‖ π_ref)
       per_token_loss = -(surr - beta · kl)

   then averaged over each completion's own tokens (mask True), then over the N completions:

       loss = mean_i ( Σ_t mask[i, t] · per_token_loss[i, t] / max(Σ_t mask[i, t], 1) )

   That is DeepSeekMath's 1/G Σ_i 1/|o_i| Σ_t, and TRL's loss_type="grpo" (which clamps |o_i| to at
   least 1, so an empty completion adds 0). Not the token-level mean over the whole batch (TRL's
   "bnpo", DAPO) and not a division by the padded length T (Dr. GRPO).

Arguments of group_advantages:
    rewards     (N,) float: one scalar reward per completion
    group_size  int G >= 2; N is a multiple of G
    eps         float, default 1e-4 (TRL's)
returns (N,) float, rewards' dtype.

Arguments of grpo_loss:
    logps       (N, T) float: log π_θ of each completion token under the policy being trained
    old_logps   (N, T) float: log π_θ_old, the policy that sampled the completions (no gradient needed)
    ref_logps   (N, T) float: log π_ref, the frozen reference model
    advantages  (N,) float: group_advantages(...), broadcast over the completion's tokens
    mask        (N, T) bool: True at completion tokens; False at padding (whose logps must not count)
    clip_eps    float ε, default 0.2
    beta        float β, default 0.04 (DeepSeekMath's KL coefficient)
returns a scalar (0-dim) tensor of logps' dtype, differentiable in logps.

Rules: do not modify the inputs.
Off limits: trl.
"""

import torch
from torch import Tensor


def group_advantages(rewards: Tensor, group_size: int, eps: float = 1e-4) -> Tensor:
    raise NotImplementedError("write group_advantages: mean and std within each group of group_size rewards")


def grpo_loss(logps: Tensor, old_logps: Tensor, ref_logps: Tensor, advantages: Tensor, mask: Tensor,
              clip_eps: float = 0.2, beta: float = 0.04) -> Tensor:
    raise NotImplementedError("write grpo_loss: ratio, clipped surrogate, k3 KL, per-sequence masked mean")
