# expect: right pattern as 1 and 0 numbers
"""The band built as a float matrix of ones (tril of ones, minus what lies window or more behind), used as a
multiplier's condition: the pattern is right, the dtype is not bool."""
import math

import torch


def sliding_window_mask(T, window, device=None):
    if window < 1:
        raise ValueError("window must be >= 1")
    ones = torch.ones(T, T, device=device)
    return torch.tril(ones) - torch.tril(ones, diagonal=-window)


def sliding_window_attention(q, k, v, window):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    band = sliding_window_mask(q.size(-2), window, device=q.device)
    scores = scores.masked_fill(band == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
