"""The DPO loss from per-token log-probabilities (reference answer).

Shape legend:
    B    number of preference pairs
    T_c  length of the chosen sequences, T_r of the rejected ones

loss = mean_B −log σ(β · ((log π(y_c) − log π_ref(y_c)) − (log π(y_r) − log π_ref(y_r)))), each
log π(y) the masked SUM of its per-token log-probabilities, as the DPO authors' code and TRL.
"""

import torch
import torch.nn.functional as F
from torch import Tensor


def sequence_logps(logps: Tensor, mask: Tensor) -> Tensor:
    """log π(y|x): the SUM of the per-token log-probabilities over the response tokens (mask True)."""
    return torch.einsum("bt,bt->b", logps, mask.to(logps.dtype))  # (B, T) x (B, T) -> (B,)


def dpo_loss(policy_chosen_logps: Tensor, policy_rejected_logps: Tensor, ref_chosen_logps: Tensor,
             ref_rejected_logps: Tensor, chosen_mask: Tensor, rejected_mask: Tensor,
             beta: float = 0.1) -> tuple[Tensor, Tensor, Tensor]:
    """DPO's sigmoid loss over B pairs, and the implicit rewards β · log(π / π_ref) of each response."""
    # 1) log-ratios of policy to reference for each response, summed over its response tokens
    chosen = sequence_logps(policy_chosen_logps - ref_chosen_logps, chosen_mask)  # (B, T_c) -> (B,)
    rejected = sequence_logps(policy_rejected_logps - ref_rejected_logps, rejected_mask)  # (B, T_r) -> (B,)
    # 2) the margin: how much more than the reference the policy prefers y_c to y_r
    logits = chosen - rejected  # (B,)
    # 3) -log σ(β z), stably (log(sigmoid) is -inf below z ≈ -745), averaged over the pairs
    loss = -F.logsigmoid(beta * logits).mean()  # ()
    # 4) the implicit rewards, for logging only
    return loss, beta * chosen.detach(), beta * rejected.detach()  # (), (B,), (B,)
