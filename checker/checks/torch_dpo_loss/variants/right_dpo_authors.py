"""The DPO authors' preference_loss (eric-mitchell/direct-preference-optimization), names adapted:
_get_batch_logps sums per-token log-probabilities under a float loss mask."""
import torch
import torch.nn.functional as F


def _batch_logps(per_token_logps, loss_mask):
    return (per_token_logps * loss_mask.float()).sum(-1)


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    policy_chosen = _batch_logps(policy_chosen_logps, chosen_mask)
    policy_rejected = _batch_logps(policy_rejected_logps, rejected_mask)
    reference_chosen = _batch_logps(ref_chosen_logps, chosen_mask)
    reference_rejected = _batch_logps(ref_rejected_logps, rejected_mask)

    pi_logratios = policy_chosen - policy_rejected
    ref_logratios = reference_chosen - reference_rejected
    logits = pi_logratios - ref_logratios
    losses = -F.logsigmoid(beta * logits)
    chosen_rewards = beta * (policy_chosen - reference_chosen).detach()
    rejected_rewards = beta * (policy_rejected - reference_rejected).detach()
    return losses.mean(), chosen_rewards, rejected_rewards
