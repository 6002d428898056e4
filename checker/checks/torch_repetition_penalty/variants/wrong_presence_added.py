# expect: +
"""The presence penalty added to the logits: a positive presence_penalty then rewards repeats."""
import torch


def apply_penalties(logits, generated, penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0):
    score = logits.gather(1, generated)
    score = torch.where(score > 0, score / penalty, score * penalty)
    out = logits.scatter(1, generated, score)
    counts = torch.zeros_like(logits).scatter_add(1, generated, torch.ones_like(score))
    out = out - counts * frequency_penalty
    out = out + (counts > 0).to(out.dtype) * presence_penalty
    return out
