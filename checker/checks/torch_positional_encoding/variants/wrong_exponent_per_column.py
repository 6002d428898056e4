# expect: your cos columns use the exponent (2i+1)/d_model
"""One exponent per column, arange(d_model) / d_model, instead of one per pair."""
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        position = torch.arange(max_len, dtype=torch.float).unsqueeze(1)
        angles = position / torch.pow(10000.0, torch.arange(d_model).float() / d_model)
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(angles[:, 0::2])
        pe[:, 1::2] = torch.cos(angles[:, 1::2])
        self.register_buffer("pe", pe.unsqueeze(0))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(x + self.pe[:, : x.size(1)])
