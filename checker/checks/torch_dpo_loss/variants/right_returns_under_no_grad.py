import torch
import torch.nn.functional as F
from torch import Tensor


def _seq_logp(logps: Tensor, mask: Tensor) -> Tensor:
    return torch.where(mask, logps, torch.zeros_like(logps)).sum(dim=1)  # (B, T) -> (B,)


def dpo_loss(policy_chosen_logps: Tensor, policy_rejected_logps: Tensor, ref_chosen_logps: Tensor,
             ref_rejected_logps: Tensor, chosen_mask: Tensor, rejected_mask: Tensor,
             beta: float = 0.1) -> tuple[Tensor, Tensor, Tensor]:
    chosen = _seq_logp(policy_chosen_logps, chosen_mask) - _seq_logp(ref_chosen_logps, chosen_mask)
    rejected = _seq_logp(policy_rejected_logps, rejected_mask) - _seq_logp(ref_rejected_logps, rejected_mask)
    loss = F.softplus(-beta * (chosen - rejected)).mean()
    with torch.no_grad():
        return loss, beta * chosen, beta * rejected
