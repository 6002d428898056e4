# expect: score / penalty
"""Only the negative logits are penalised (multiplied); the positive ones, the likely tokens that repeat most, are left as they are."""
import torch


def apply_penalties(logits, generated, penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0):
    score = logits.gather(1, generated)
    score = torch.where(score < 0, score * penalty, score)
    out = logits.scatter(1, generated, score)
    counts = torch.zeros_like(logits).scatter_add(1, generated, torch.ones_like(score))
    out = out - counts * frequency_penalty
    out = out - (counts > 0).to(out.dtype) * presence_penalty
    return out
