# expect: modified its input
"""Writes the mask into the scores in place and also scales Q in place: the caller's Q changes."""
import math

import torch
from torch import nn


class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, Q, K, V, mask=None):
        Q.div_(math.sqrt(Q.size(-1)))
        scores = Q @ K.transpose(-2, -1)
        if mask is not None:
            scores.masked_fill_(~mask, float("-inf"))
        weights = torch.nan_to_num(scores.softmax(-1), nan=0.0)
        return weights @ V, weights
