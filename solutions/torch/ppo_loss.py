"""PPO's token-level loss for LLM fine-tuning (reference answer).

Shape legend:
    B  sequences (prompt + response) in the minibatch
    T  response length (padded)
    V  vocabulary size

As TRL's PPOTrainer (masked_mean over the response tokens) with CleanRL's entropy bonus:
loss = pg_loss + vf_coef · vf_loss - ent_coef · entropy, where
pg_loss = mean(max(-A·ρ, -A·clip(ρ, 1 - ε, 1 + ε))), ρ = exp(logprobs - old_logprobs),
vf_loss = 0.5 · mean(max((v - R)², (clip(v, v_old - ε_v, v_old + ε_v) - R)²)),
entropy = mean(-Σ π log π), π = softmax(logits), every mean over the response tokens (per token, or per sequence first).
"""

import torch
from torch import Tensor


def masked_mean(x: Tensor, mask: Tensor, per_sequence: bool) -> Tensor:
    """The mean of x (B, T) over the True positions of mask: all at once, or per row and then over the rows."""
    m = mask.to(x.dtype)  # (B, T)
    if per_sequence:
        return ((x * m).sum(dim=1) / m.sum(dim=1)).mean(dim=0)  # (B,) -> ()
    return (x * m).sum() / m.sum()  # ()


def policy_losses(logprobs: Tensor, old_logprobs: Tensor, advantages: Tensor, clip_eps: float) -> Tensor:
    """PPO's clipped surrogate per token, as a loss: the larger of the two negated objectives, (B, T)."""
    ratio = torch.exp(logprobs - old_logprobs)  # (B, T) π_θ / π_θ_old
    clipped = torch.clamp(ratio, min=1.0 - clip_eps, max=1.0 + clip_eps)  # (B, T)
    return torch.max(-advantages * ratio, -advantages * clipped)  # (B, T)


def value_losses(values: Tensor, old_values: Tensor, returns: Tensor, clip_value: float) -> Tensor:
    """The clipped value loss per token, before the factor 0.5: (B, T)."""
    clipped = torch.clamp(values, min=old_values - clip_value, max=old_values + clip_value)  # (B, T)
    return torch.max(torch.square(values - returns), torch.square(clipped - returns))  # (B, T)


def entropy_per_token(logits: Tensor) -> Tensor:
    """H(π) = -Σ_v π_v · log π_v over the vocabulary, π = softmax(logits): (B, T, V) -> (B, T)."""
    log_probs = torch.log_softmax(logits, dim=-1)  # (B, T, V), stable where π_v underflows
    probs = torch.exp(log_probs)  # (B, T, V)
    return -torch.sum(probs * log_probs, dim=-1)  # (B, T)


def ppo_loss(logprobs: Tensor, old_logprobs: Tensor, advantages: Tensor, values: Tensor, old_values: Tensor,
             returns: Tensor, logits: Tensor, mask: Tensor, clip_eps: float = 0.2, clip_value: float = 0.2,
             vf_coef: float = 0.1, ent_coef: float = 0.01, reduction: str = "token"):
    """(loss, pg_loss, vf_loss, entropy), four 0-dim tensors."""
    if reduction not in ("token", "sequence"):
        raise ValueError(f"reduction must be 'token' or 'sequence', got {reduction!r}")
    per_sequence = reduction == "sequence"
    # 1) the clipped policy surrogate, over the response tokens
    pg_loss = masked_mean(policy_losses(logprobs, old_logprobs, advantages, clip_eps), mask, per_sequence)  # ()
    # 2) the clipped value loss: the new value may move at most clip_value from the old one
    vf_loss = 0.5 * masked_mean(value_losses(values, old_values, returns, clip_value), mask, per_sequence)  # ()
    # 3) the policy's entropy at each response token
    entropy = masked_mean(entropy_per_token(logits), mask, per_sequence)  # ()
    # 4) the total: the value loss added, the entropy bonus subtracted
    loss = pg_loss + vf_coef * vf_loss - ent_coef * entropy  # ()
    return loss, pg_loss, vf_loss, entropy
