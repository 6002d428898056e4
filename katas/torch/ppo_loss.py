"""PPO's token-level loss for LLM fine-tuning (RLHF with a value head), from scratch.

Shape legend:
    B  sequences (prompt + response) in the minibatch
    T  response length (padded on the right)
    V  vocabulary size

Implement the loss of one PPO minibatch step (Schulman et al. 2017, "Proximal Policy Optimization
Algorithms", eq. 7 and 9; Ouyang et al. 2022 for LLMs), as TRL's PPOTrainer computes it over the
response tokens, with CleanRL's entropy bonus. Per response token:

    ratio      = exp(logprobs - old_logprobs)                                 π_θ / π_θ_old
    pg_losses  = max(-A · ratio, -A · clip(ratio, 1 - clip_eps, 1 + clip_eps))  PPO's clipped surrogate, as a loss
    v_clipped  = clip(values, old_values - clip_value, old_values + clip_value)
    vf_losses  = max((values - returns)², (v_clipped - returns)²)                 the clipped value loss
    H          = -Σ_v π_v · log π_v,  π = softmax(logits)                        the policy's entropy

then means over the response tokens (mask True) only:

    pg_loss = mean(pg_losses)      vf_loss = 0.5 · mean(vf_losses)      entropy = mean(H)
    loss    = pg_loss + vf_coef · vf_loss - ent_coef · entropy

The mean, by `reduction`:
    "token" (default, TRL's masked_mean):  Σ_(b,t) mask · x / Σ_(b,t) mask, every response token weighs the same;
    "sequence":  the mean over the B sequences of Σ_t mask · x / Σ_t mask, every sequence weighs the same.
Any other value: raise ValueError.

Arguments (float tensors share one dtype, float64 or float32):
    logprobs      (B, T) float: log π_θ of each sampled response token, under the policy being trained
    old_logprobs  (B, T) float: log π_θ_old, from the rollout (no gradient needed)
    advantages    (B, T) float: A_t per token (GAE's), already computed
    values        (B, T) float: the value head's new predictions V_θ(s_t)
    old_values    (B, T) float: the value predictions of the rollout (no gradient needed)
    returns       (B, T) float: the value targets (A_t + old V(s_t))
    logits        (B, T, V) float: the policy's logits at each response position (for the entropy)
    mask          (B, T) bool: True at response tokens, False at padding; every row has at least one True.
                  Padding positions hold arbitrary finite numbers in every other tensor: they must not count
    clip_eps      float > 0, default 0.2 (TRL's cliprange)
    clip_value    float > 0, default 0.2 (TRL's cliprange_value)
    vf_coef       float >= 0, default 0.1 (TRL's vf_coef)
    ent_coef      float >= 0, default 0.01 (CleanRL's ent_coef; TRL adds no entropy bonus, ent_coef = 0)
    reduction     "token" (default) or "sequence"
returns (loss, pg_loss, vf_loss, entropy): four 0-dim tensors of logprobs' dtype, differentiable in
logprobs, values and logits.

Rules: do not modify the inputs.
Off limits: trl.
"""

import torch
from torch import Tensor


def ppo_loss(logprobs: Tensor, old_logprobs: Tensor, advantages: Tensor, values: Tensor, old_values: Tensor,
             returns: Tensor, logits: Tensor, mask: Tensor, clip_eps: float = 0.2, clip_value: float = 0.2,
             vf_coef: float = 0.1, ent_coef: float = 0.01, reduction: str = "token"):
    raise NotImplementedError("write ppo_loss: clipped surrogate, clipped value loss, entropy, masked means")
