# expect: integer division
"""2 * pair // d_model: integer division, every exponent 0."""

import numpy as np


def positional_encoding(position: int, d_model: int) -> np.ndarray:
    """The (1, T, D) table of sinusoidal position vectors, float64."""
    # 1) every position, and every column's pair index i = j // 2 (columns 2i and 2i+1 share a frequency)
    pos = np.arange(position)[:, None]  # (T, 1)
    pair = np.arange(d_model)[None, :] // 2  # (1, D)
    # 2) angle = pos / 10000^(2i / D)
    angles = pos / np.power(10000.0, 2 * pair // d_model)
    # 3) sin on even columns, cos on odd ones (an odd D simply has one more even column)
    pe = np.empty((position, d_model))  # (T, D), float64
    pe[:, 0::2] = np.sin(angles[:, 0::2])  # (T, (D + 1) // 2)
    pe[:, 1::2] = np.cos(angles[:, 1::2])  # (T, D // 2)
    # 4) a batch axis of size 1, so the table broadcasts over (B, T, D)
    return pe[None]  # (1, T, D)
