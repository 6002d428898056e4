# expect: where the contract says it raises ValueError
"""The band as tril & triu(-(window - 1)) with no check of the window (the textbook mask), -inf fill."""
import math

import torch


def sliding_window_mask(T, window, device=None):
    ones = torch.ones(T, T, dtype=torch.bool, device=device)
    return torch.tril(ones) & torch.triu(ones, diagonal=1 - window)


def sliding_window_attention(q, k, v, window):
    d_k = q.shape[-1]
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d_k)
    keep = sliding_window_mask(q.shape[-2], window, device=q.device)
    scores = scores.masked_fill(~keep, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("bhqk,bhkd->bhqd", weights, v)
