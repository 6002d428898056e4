"""A hand-written stable log-sigmoid: log σ(z) = min(z, 0) - log(1 + exp(-|z|))."""
import torch


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_mask,
             rejected_mask, beta=0.1):
    m_c, m_r = chosen_mask.to(policy_chosen_logps.dtype), rejected_mask.to(policy_rejected_logps.dtype)
    pi_c = torch.einsum("bt,bt->b", policy_chosen_logps, m_c)
    pi_r = torch.einsum("bt,bt->b", policy_rejected_logps, m_r)
    ref_c = torch.einsum("bt,bt->b", ref_chosen_logps, m_c)
    ref_r = torch.einsum("bt,bt->b", ref_rejected_logps, m_r)
    z = beta * ((pi_c - ref_c) - (pi_r - ref_r))
    log_sigmoid = torch.clamp(z, max=0) - torch.log1p(torch.exp(-z.abs()))
    return -log_sigmoid.mean(), beta * (pi_c - ref_c).detach(), beta * (pi_r - ref_r).detach()
