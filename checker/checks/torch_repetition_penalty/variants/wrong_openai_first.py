# expect: order
"""The frequency and presence penalties subtracted first, then CTRL's rescaling on the result: a logit pushed below 0 by the subtraction is then multiplied, not divided. vLLM and Hugging Face's processor lists apply the repetition penalty first."""
import torch


def apply_penalties(logits, generated, penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0):
    counts = torch.zeros_like(logits).scatter_add(1, generated, torch.ones_like(generated, dtype=logits.dtype))
    out = logits - counts * frequency_penalty - (counts > 0).to(logits.dtype) * presence_penalty
    score = out.gather(1, generated)
    score = torch.where(score > 0, score / penalty, score * penalty)
    return out.scatter(1, generated, score)
