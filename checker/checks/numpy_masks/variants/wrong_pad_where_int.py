# expect: got numpy.int64
"""np.where(tokens == pad_id, 0, 1): an int mask."""

import numpy as np


def make_pad_mask(tokens: np.ndarray, pad_id: int = 0) -> np.ndarray:
    """(B, T) token ids -> (B, 1, 1, T) bool, True at real tokens."""
    real = np.where(tokens == pad_id, 0, 1)  # (B, T) bool
    return real[:, np.newaxis, np.newaxis, :]  # (B, T) -> (B, 1, 1, T): broadcasts over heads and queries


def make_causal_mask(T: int) -> np.ndarray:
    """(T, T) bool, True on and below the diagonal: query i sees keys 0..i."""
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)
