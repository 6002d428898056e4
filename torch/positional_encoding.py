"""Sinusoidal positional encoding.

Shape legend:
    B        batch size
    T        sequence length, T <= max_len
    D        d_model, the embedding size (may be odd)
    max_len  number of positions the table covers

Implement PositionalEncoding ("Attention Is All You Need", section 3.5):

    PE[pos, 2i]   = sin(pos / 10000^(2i / d_model))
    PE[pos, 2i+1] = cos(pos / 10000^(2i / d_model))

for pos = 0, 1, ..., max_len - 1. Both columns of a pair share one frequency. With an odd
d_model the last column (index d_model - 1) is a sin column: there are ceil(D/2) sin columns
and floor(D/2) cos columns, which use the first d_model // 2 frequencies.

__init__(d_model, max_len=5000, dropout=0.0):
    computes the table once and registers it as a buffer named `pe` (self.register_buffer),
    shape (1, max_len, D). It is fixed, not a parameter. Keep it in the default dtype
    (float32), or cast it to x's dtype in forward.
forward(x):
    x        (B, T, D) float tensor
    returns  (B, T, D), same dtype as x: self.dropout(x + pe[:, :T])

Rules: do not modify x; apply self.dropout to the sum (the checker uses dropout=0.0,
except in one check that trains with dropout=0.5).
"""

import math

import torch
from torch import Tensor, nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        raise NotImplementedError("build the (1, max_len, d_model) table and register it as the buffer 'pe'")

    def forward(self, x: Tensor) -> Tensor:
        raise NotImplementedError("write the body of PositionalEncoding.forward")
