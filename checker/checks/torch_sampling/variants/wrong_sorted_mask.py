# expect: one variable read where another belongs
"""The classic nucleus bug: the mask computed on the sorted logits is applied to the unsorted ones."""
import torch


def filter_logits(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    logits = logits / temperature
    if top_k:
        values, _ = torch.topk(logits, min(top_k, logits.size(-1)))
        logits = torch.where(logits < values[..., [-1]], float("-inf"), logits)
    if top_p is not None and top_p < 1.0:
        sorted_logits, _ = torch.sort(logits, descending=True)
        probs = torch.softmax(sorted_logits, dim=-1)
        remove = torch.cumsum(probs, dim=-1) - probs >= top_p
        logits = logits.masked_fill(remove, float("-inf"))
    return logits


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs.flatten(0, -2), num_samples=1, generator=generator).view(probs.shape[:-1])
