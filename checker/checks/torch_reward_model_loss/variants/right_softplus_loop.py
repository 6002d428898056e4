"""The Llama 2 paper's eq. 2 written per pair, -log σ(x) as softplus(-x): a loop over the pairs, each sequence's last
real token found with nonzero(). The contract's ValueError for a margin that is not (B,) is added."""
import torch
import torch.nn.functional as F


def reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin=None):
    if margin is not None and margin.shape != (chosen_scores.shape[0],):
        raise ValueError("margin must have shape (B,)")
    chosen, rejected, losses = [], [], []
    for b in range(chosen_scores.shape[0]):
        r_c = chosen_scores[b, chosen_mask[b].nonzero()[-1, 0]]
        r_r = rejected_scores[b, rejected_mask[b].nonzero()[-1, 0]]
        m = 0.0 if margin is None else margin[b]
        losses.append(F.softplus(-(r_c - r_r - m)))
        chosen.append(r_c)
        rejected.append(r_r)
    return torch.stack(losses).mean(), torch.stack(chosen), torch.stack(rejected)
