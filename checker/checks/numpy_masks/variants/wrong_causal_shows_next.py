# expect: np.tril with k=0
"""np.tril(..., k=1): each query also sees the next key."""

import numpy as np


def make_pad_mask(tokens: np.ndarray, pad_id: int = 0) -> np.ndarray:
    """(B, T) token ids -> (B, 1, 1, T) bool, True at real tokens."""
    real = tokens != pad_id  # (B, T) bool
    return real[:, np.newaxis, np.newaxis, :]  # (B, T) -> (B, 1, 1, T): broadcasts over heads and queries


def make_causal_mask(T: int) -> np.ndarray:
    """(T, T) bool, True on and below the diagonal: query i sees keys 0..i."""
    return np.tril(np.ones((T, T), dtype=bool), k=1)
