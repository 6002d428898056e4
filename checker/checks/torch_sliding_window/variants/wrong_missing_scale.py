# expect: without the 1/√d_k scale
"""Right mask, but the scores are never divided by sqrt(d_k)."""
import torch


def sliding_window_mask(T, window, device=None):
    if window < 1:
        raise ValueError("window must be >= 1")
    ones = torch.ones(T, T, dtype=torch.bool, device=device)
    return ones.tril() & ones.triu(-(window - 1))


def sliding_window_attention(q, k, v, window):
    scores = q @ k.transpose(-2, -1)
    scores = scores.masked_fill(~sliding_window_mask(q.size(-2), window, q.device), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
