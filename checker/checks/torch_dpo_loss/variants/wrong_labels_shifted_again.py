# expect: your sums pair logps[:, :-1] with mask[:, 1:]
import torch
import torch.nn.functional as F
from torch import Tensor


def dpo_loss(policy_chosen_logps: Tensor, policy_rejected_logps: Tensor, ref_chosen_logps: Tensor,
             ref_rejected_logps: Tensor, chosen_mask: Tensor, rejected_mask: Tensor,
             beta: float = 0.1) -> tuple[Tensor, Tensor, Tensor]:
    # shift as in get_batch_logps: token t predicts t + 1
    pc = (policy_chosen_logps[:, :-1] * chosen_mask[:, 1:]).sum(-1)
    pr = (policy_rejected_logps[:, :-1] * rejected_mask[:, 1:]).sum(-1)
    rc = (ref_chosen_logps[:, :-1] * chosen_mask[:, 1:]).sum(-1)
    rr = (ref_rejected_logps[:, :-1] * rejected_mask[:, 1:]).sum(-1)
    logratios = pc - pr
    ref_logratios = rc - rr
    logits = logratios - ref_logratios
    label_smoothing = 0.0
    losses = -F.logsigmoid(beta * logits) * (1 - label_smoothing) - F.logsigmoid(-beta * logits) * label_smoothing
    chosen_rewards = beta * (pc - rc).detach()
    rejected_rewards = beta * (pr - rr).detach()
    return losses.mean(), chosen_rewards, rejected_rewards
