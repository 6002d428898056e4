"""Padding and look-ahead (causal) masks (reference answer).

Shape legend:
    B    batch size
    T    sequence length

Mask convention (the whole catalogue): bool, True = this query may attend to this key,
broadcastable to the attention scores (B, H, T_q, T_k).
"""

import numpy as np


def make_pad_mask(tokens: np.ndarray, pad_id: int = 0) -> np.ndarray:
    """(B, T) token ids -> (B, 1, 1, T) bool, True at real tokens."""
    real = tokens != pad_id  # (B, T) bool
    return real[:, np.newaxis, np.newaxis, :]  # (B, T) -> (B, 1, 1, T): broadcasts over heads and queries


def make_causal_mask(T: int) -> np.ndarray:
    """(T, T) bool, True on and below the diagonal: query i sees keys 0..i."""
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)
