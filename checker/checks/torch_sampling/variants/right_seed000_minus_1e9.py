# followup: your removed tokens hold -1e9 (the NumPy tutorial's habit)
"""Seed 000's habit: a big negative number instead of -inf."""
import torch


def filter_logits(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    scores = logits / temperature
    if top_k and top_k < scores.size(-1):
        kth = scores.topk(top_k, dim=-1).values[..., -1:]
        scores = scores.masked_fill(scores < kth, -1e9)
    if top_p is not None and top_p < 1.0:
        sorted_scores, order = scores.sort(dim=-1, descending=True)
        probs = sorted_scores.softmax(dim=-1)
        drop = probs.cumsum(dim=-1) - probs >= top_p
        scores = scores.masked_fill(drop.scatter(-1, order, drop), -1e9)
    return scores


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return logits.argmax(dim=-1)
    probs = filter_logits(logits, temperature, top_k, top_p).softmax(dim=-1)
    return torch.multinomial(probs.reshape(-1, probs.size(-1)), 1, generator=generator).view(probs.shape[:-1])
