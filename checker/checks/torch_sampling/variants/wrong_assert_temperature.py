# expect: where the contract says it raises ValueError
"""Sampling with -inf fills, the temperature checked with asserts instead of ValueError."""
import torch


def filter_logits(logits, temperature=1.0, top_k=None, top_p=None):
    assert temperature > 0, "temperature must be > 0"
    scores = logits / temperature
    if top_k and top_k < scores.size(-1):
        kth = scores.topk(top_k, dim=-1).values[..., -1:]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if top_p is not None and top_p < 1.0:
        sorted_scores, order = scores.sort(dim=-1, descending=True)
        probs = sorted_scores.softmax(dim=-1)
        drop = probs.cumsum(dim=-1) - probs >= top_p
        scores = scores.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
    return scores


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    assert temperature >= 0, "temperature must be >= 0"
    if temperature == 0:
        return logits.argmax(dim=-1)
    probs = filter_logits(logits, temperature, top_k, top_p).softmax(dim=-1)
    return torch.multinomial(probs.reshape(-1, probs.size(-1)), 1, generator=generator).view(probs.shape[:-1])
