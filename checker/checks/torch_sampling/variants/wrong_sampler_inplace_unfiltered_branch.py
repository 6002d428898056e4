# expect: on some branches your code writes into the caller's logits
"""The sampler's no-filter shortcut divides the caller's logits in place (logits /= temperature)."""

import torch
from torch import Tensor


def filter_logits(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None) -> Tensor:
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    scores = logits / temperature
    if top_k and top_k < scores.size(-1):
        kth = scores.topk(top_k, dim=-1).values[..., -1:]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if top_p is not None and top_p < 1.0:
        sorted_scores, order = scores.sort(dim=-1, descending=True)
        probs = sorted_scores.softmax(dim=-1)
        drop_sorted = probs.cumsum(dim=-1) - probs >= top_p
        scores = scores.masked_fill(drop_sorted.scatter(-1, order, drop_sorted), float("-inf"))
    return scores


def sample_next_token(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                      top_p: float | None = None, generator: torch.Generator | None = None) -> Tensor:
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if temperature == 0:
        return logits.argmax(dim=-1)
    if not top_k and (top_p is None or top_p >= 1.0):  # nothing to filter: plain softmax sampling
        logits /= temperature
        probs = logits.softmax(dim=-1)
    else:
        probs = filter_logits(logits, temperature, top_k, top_p).softmax(dim=-1)
    rows = probs.reshape(-1, probs.size(-1))
    return torch.multinomial(rows, 1, generator=generator).view(probs.shape[:-1])
