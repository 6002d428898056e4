# expect: the axis a reduction, softmax, cumsum or concatenation runs over
"""Softmax over axis 1 in the nucleus: right for (B, V), wrong for (B, T, V)."""

import torch
from torch import Tensor


def filter_logits(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None) -> Tensor:
    """(..., V) logits -> (..., V): logits / temperature where eligible, -inf elsewhere."""
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    # 1) temperature: T < 1 sharpens the distribution, T > 1 flattens it
    scores = logits / temperature  # (..., V)
    # 2) top-k: keep every token at least as large as the k-th largest
    if top_k and top_k < scores.size(-1):
        kth = scores.topk(top_k, dim=-1).values[..., -1:]  # (..., k) -> (..., 1)
        scores = scores.masked_fill(scores < kth, float("-inf"))
    # 3) top-p on the distribution top-k left: drop a token once the more probable ones reach top_p
    if top_p is not None and top_p < 1.0:
        sorted_scores, order = scores.sort(dim=-1, descending=True)  # (..., V); order: sorted -> vocabulary index
        probs = sorted_scores.softmax(dim=1)  # (..., V)
        before = probs.cumsum(dim=-1) - probs  # (..., V): mass of the strictly more probable tokens
        drop_sorted = before >= top_p  # (..., V), in sorted order; the crossing token has before < top_p
        drop = drop_sorted.scatter(-1, order, drop_sorted)  # (..., V), back in vocabulary order
        scores = scores.masked_fill(drop, float("-inf"))
    return scores


def sample_next_token(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                      top_p: float | None = None, generator: torch.Generator | None = None) -> Tensor:
    """(..., V) logits -> (...) int64: one token per row; temperature 0 takes the argmax."""
    # 1) temperature 0: greedy, no randomness
    if temperature == 0:
        return logits.argmax(dim=-1)  # (..., V) -> (...)
    # 2) the filtered distribution, then one draw per row from the caller's generator
    probs = filter_logits(logits, temperature, top_k, top_p).softmax(dim=-1)  # (..., V)
    rows = probs.reshape(-1, probs.size(-1))  # (N, V): multinomial takes 2-D input
    return torch.multinomial(rows, 1, generator=generator).view(probs.shape[:-1])  # (N, 1) -> (...)
