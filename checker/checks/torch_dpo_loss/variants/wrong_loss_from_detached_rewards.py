# expect: your loss has no gradient at all
import torch
import torch.nn.functional as F
from torch import Tensor


def dpo_loss(policy_chosen_logps: Tensor, policy_rejected_logps: Tensor, ref_chosen_logps: Tensor,
             ref_rejected_logps: Tensor, chosen_mask: Tensor, rejected_mask: Tensor,
             beta: float = 0.1) -> tuple[Tensor, Tensor, Tensor]:
    pc = (policy_chosen_logps * chosen_mask).sum(-1)
    pr = (policy_rejected_logps * rejected_mask).sum(-1)
    rc = (ref_chosen_logps * chosen_mask).sum(-1)
    rr = (ref_rejected_logps * rejected_mask).sum(-1)
    logratios = pc - pr
    ref_logratios = rc - rr
    logits = logratios - ref_logratios
    label_smoothing = 0.0
    chosen_rewards = beta * (pc - rc).detach()
    rejected_rewards = beta * (pr - rr).detach()
    losses = -F.logsigmoid(chosen_rewards - rejected_rewards)
    return losses.mean(), chosen_rewards, rejected_rewards
