# expect: plain causal
"""Only the causal part: tril, and the window never used."""
import math

import torch


def sliding_window_mask(T, window, device=None):
    if window < 1:
        raise ValueError("window must be >= 1")
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def sliding_window_attention(q, k, v, window):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    scores = scores.masked_fill(~sliding_window_mask(q.size(-2), window, q.device), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
