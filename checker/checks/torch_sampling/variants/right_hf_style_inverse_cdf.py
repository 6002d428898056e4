"""Hugging Face's warpers (ascending sort, remove cumsum <= 1 - top_p) and an inverse-CDF sampler."""
import torch


def filter_logits(logits, temperature=1.0, top_k=None, top_p=None):
    if not temperature > 0:
        raise ValueError(f"temperature must be strictly positive, got {temperature}")
    scores = logits / temperature
    V = scores.shape[-1]
    if top_k is not None and top_k > 0:
        k = min(top_k, V)
        remove = scores < torch.topk(scores, k)[0][..., -1, None]
        scores = scores.masked_fill(remove, -float("inf"))
    if top_p is not None and top_p != 1.0:
        sorted_logits, sorted_indices = torch.sort(scores, descending=False)
        cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        sorted_remove = cumulative <= (1 - top_p)
        sorted_remove[..., -1:] = False
        remove = sorted_remove.scatter(-1, sorted_indices, sorted_remove)
        scores = scores.masked_fill(remove, -float("inf"))
    return scores


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    cdf = probs.cumsum(dim=-1)  # (..., V)
    u = torch.rand(probs.shape[:-1] + (1,), generator=generator, dtype=probs.dtype, device=probs.device)
    return (cdf < u * cdf[..., -1:]).sum(dim=-1)  # first index whose cdf reaches u
