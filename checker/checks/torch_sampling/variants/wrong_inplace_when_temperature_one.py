# expect: your code writes into the caller's logits at temperature 1 and not at temperature 0.7
"""Skips the division at temperature 1, then masks in place: at temperature 1 that writes into the caller's logits."""

import torch
from torch import Tensor


def filter_logits(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None) -> Tensor:
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    scores = logits if temperature == 1.0 else logits / temperature  # no copy needed at T = 1
    if top_k and top_k < scores.size(-1):
        kth = torch.topk(scores, top_k, dim=-1).values[..., -1:]
        scores.masked_fill_(scores < kth, float("-inf"))
    if top_p is not None and top_p < 1.0:
        sorted_scores, order = torch.sort(scores, dim=-1, descending=True)
        probs = torch.softmax(sorted_scores, dim=-1)
        drop_sorted = probs.cumsum(dim=-1) - probs >= top_p
        drop = drop_sorted.scatter(-1, order, drop_sorted)
        scores.masked_fill_(drop, float("-inf"))
    return scores


def sample_next_token(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                      top_p: float | None = None, generator: torch.Generator | None = None) -> Tensor:
    if temperature == 0:
        return logits.argmax(dim=-1)
    probs = filter_logits(logits, temperature, top_k, top_p).softmax(dim=-1)
    rows = probs.reshape(-1, probs.size(-1))
    return torch.multinomial(rows, 1, generator=generator).view(probs.shape[:-1])
