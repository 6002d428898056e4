# expect: score / penalty
"""CTRL's rule as first released, and Hugging Face's first port of it: every generated token's logit divided by the penalty, so a negative logit moves towards 0 and the repeated token becomes MORE likely."""
import torch


def apply_penalties(logits, generated, penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0):
    score = logits.gather(1, generated)
    score = score / penalty
    out = logits.scatter(1, generated, score)
    counts = torch.zeros_like(logits).scatter_add(1, generated, torch.ones_like(score))
    out = out - counts * frequency_penalty
    out = out - (counts > 0).to(out.dtype) * presence_penalty
    return out
