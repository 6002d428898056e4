"""Bradley–Terry as a two-way softmax (InstructGPT's loss written as cross-entropy over the pair): P(chosen wins) =
exp(r_c - m) / (exp(r_c - m) + exp(r_r)), so the loss is F.cross_entropy over the logits [r_c - m, r_r] with target
0. The last real token found with a cumulative sum: its first maximum is the last True. The contract's ValueError for a margin that is not (B,) is added."""
import torch
import torch.nn.functional as F


def _last(scores, mask):
    last = mask.long().cumsum(dim=1).argmax(dim=1)
    return scores[torch.arange(scores.shape[0]), last]


def reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin=None):
    if margin is not None and margin.shape != (chosen_scores.shape[0],):
        raise ValueError("margin must have shape (B,)")
    r_c, r_r = _last(chosen_scores, chosen_mask), _last(rejected_scores, rejected_mask)
    shifted = r_c if margin is None else r_c - margin
    logits = torch.stack([shifted, r_r], dim=1)
    target = torch.zeros(r_c.shape[0], dtype=torch.long)
    return F.cross_entropy(logits, target), r_c, r_r
