# expect: window + 1 keys
"""Off by one: i - window <= j <= i lets every query see window + 1 keys."""
import math

import torch


def sliding_window_mask(T, window, device=None):
    if window < 1:
        raise ValueError("window must be >= 1")
    i = torch.arange(T, device=device).unsqueeze(1)
    j = torch.arange(T, device=device).unsqueeze(0)
    return (j <= i) & (j >= i - window)


def sliding_window_attention(q, k, v, window):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    scores = scores.masked_fill(~sliding_window_mask(q.size(-2), window, q.device), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
