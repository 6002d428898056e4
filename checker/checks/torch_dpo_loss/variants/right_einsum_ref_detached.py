import torch
import torch.nn.functional as F
from torch import Tensor


def dpo_loss(policy_chosen_logps: Tensor, policy_rejected_logps: Tensor, ref_chosen_logps: Tensor,
             ref_rejected_logps: Tensor, chosen_mask: Tensor, rejected_mask: Tensor,
             beta: float = 0.1) -> tuple[Tensor, Tensor, Tensor]:
    mc = chosen_mask.to(policy_chosen_logps.dtype)
    mr = rejected_mask.to(policy_rejected_logps.dtype)
    # log-ratio per token, then the masked sum: Σ_t m (log π − log π_ref)
    chosen_logratio = torch.einsum("bt,bt->b", policy_chosen_logps - ref_chosen_logps.detach(), mc)
    rejected_logratio = torch.einsum("bt,bt->b", policy_rejected_logps - ref_rejected_logps.detach(), mr)
    margin = beta * (chosen_logratio - rejected_logratio)
    loss = -F.logsigmoid(margin).mean()
    return loss, (beta * chosen_logratio).detach(), (beta * rejected_logratio).detach()
