"""Seed 000's formulation in torch: one angle per column with 2 * (j // 2), float32 pow, sin/cos on slices."""
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        j = torch.arange(d_model)
        angles = torch.arange(max_len).float()[:, None] / torch.pow(10000.0, (2 * (j // 2)).float() / d_model)
        angles[:, 0::2] = torch.sin(angles[:, 0::2])
        angles[:, 1::2] = torch.cos(angles[:, 1::2])
        self.register_buffer("pe", angles[None])
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.drop(x + self.pe[:, : x.shape[1]])
