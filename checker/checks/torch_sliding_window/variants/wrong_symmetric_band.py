# expect: symmetric band
"""Longformer's encoder band |i - j| < window: fine for an encoder, but it reads the future."""
import math

import torch


def sliding_window_mask(T, window, device=None):
    if window < 1:
        raise ValueError("window must be >= 1")
    pos = torch.arange(T, device=device)
    return (pos[:, None] - pos[None, :]).abs() < window


def sliding_window_attention(q, k, v, window):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    scores = scores.masked_fill(~sliding_window_mask(q.size(-2), window, q.device), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
