# expect: queries see future keys
"""A window as long as the sequence is taken to mean 'no mask at all'."""

import math

import torch
from torch import Tensor


def sliding_window_mask(T: int, window: int, device=None) -> Tensor:
    """(T, T) bool: True where i - window < j <= i."""
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    pos = torch.arange(T, device=device)
    distance = pos[:, None] - pos[None, :]  # (T, 1) - (1, T) -> (T, T): i - j
    return (distance >= 0) & (distance < window)  # not the future, not older than window - 1


def sliding_window_attention(q: Tensor, k: Tensor, v: Tensor, window: int) -> Tensor:
    """softmax(q k^T / sqrt(d_k)) v over the last `window` keys of every query: (B, H, T, d_v)."""
    *_, T, d_k = q.shape
    # 1) every query against every key, scaled (k.mT: k with its last two axes swapped)
    scores = q @ k.mT / math.sqrt(d_k)  # (B, H, T, d_k) x (B, H, d_k, T) -> (B, H, T, T)
    # 2) hide the future and everything older than the window (the diagonal stays: no empty row)
    mask = sliding_window_mask(T, window, device=q.device)  # (T, T), broadcast over (B, H)
    if window < T:
        scores = scores.masked_fill(~mask, float("-inf"))
    # 3) normalise over the keys and average the values
    return scores.softmax(dim=-1) @ v  # (B, H, T, T) x (B, H, T, d_v) -> (B, H, T, d_v)
