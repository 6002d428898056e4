"""GRPO's objective: group-normalised advantages and the clipped, KL-penalised loss (reference answer).

Shape legend:
    N  = P · G completions, the G of one prompt contiguous
    T  completion length (padded)

As DeepSeekMath eq. 3 and TRL's GRPOTrainer (loss_type="grpo"): per token
-(min(ρA, clip(ρ, 1-ε, 1+ε)A) - β·k3), averaged over each completion's tokens, then over completions.
"""

import torch
from torch import Tensor


def group_advantages(rewards: Tensor, group_size: int, eps: float = 1e-4) -> Tensor:
    """(r - mean of its group) / (unbiased std of its group + eps), for every completion."""
    grouped = rewards.view(-1, group_size).T  # (N,) -> (P, G) -> (G, P): column p is prompt p's group
    mean = grouped.mean(dim=0)  # (P,)
    std = grouped.std(dim=0)  # (P,) unbiased (divides by G - 1), as TRL
    return ((grouped - mean) / (std + eps)).T.reshape(-1)  # (G, P) -> (P, G) -> (N,)


def grpo_loss(logps: Tensor, old_logps: Tensor, ref_logps: Tensor, advantages: Tensor, mask: Tensor,
              clip_eps: float = 0.2, beta: float = 0.04) -> Tensor:
    """The GRPO loss to minimise: mean over completions of the masked mean over their tokens."""
    A = advantages[:, None]  # (N,) -> (N, 1), the same for every token
    # 1) PPO's clipped surrogate on the probability ratio π_θ / π_θ_old
    ratio = torch.exp(logps - old_logps)  # (N, T)
    surrogate = torch.min(ratio * A, ratio.clamp(1 - clip_eps, 1 + clip_eps) * A)  # (N, T)
    # 2) the k3 estimator of KL(π_θ ‖ π_ref): unbiased and never negative
    log_r = ref_logps - logps  # (N, T)
    kl = torch.exp(log_r) - log_r - 1  # (N, T)
    per_token = -(surrogate - beta * kl)  # (N, T)
    # 3) mean over each completion's own tokens, then over the completions
    m = mask.to(per_token.dtype)  # (N, T)
    per_sequence = torch.einsum("nt,nt->n", per_token, m) / torch.einsum("nt->n", m).clamp(min=1.0)  # (N,)
    return per_sequence.mean()  # ()
