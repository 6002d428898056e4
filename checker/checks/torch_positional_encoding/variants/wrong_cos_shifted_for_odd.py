# expect: frequency of the NEXT pair
"""Fixes the odd-d_model crash by taking the cos angles from column pair 1 on: every cos frequency is shifted by one."""

import torch
from torch import Tensor, nn


class PositionalEncoding(nn.Module):
    """Adds the fixed sin/cos table to x: forward(x) = dropout(x + pe[:, :T])."""

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        # 1) one angle per (position, column pair); float64 keeps the table exact to float32 rounding
        position = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
        two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(D/2),) even column indices 2i
        angle = position / 10000.0 ** (two_i / d_model)  # (max_len, 1) / (ceil(D/2),) -> (max_len, ceil(D/2))
        # 2) even columns sin, odd columns cos; an odd d_model has one cos column fewer
        pe = torch.zeros(max_len, d_model, dtype=torch.float64)
        pe[:, 0::2] = torch.sin(angle)
        pe[:, 1::2] = torch.cos(angle[:, angle.size(1) - d_model // 2:])
        # 3) a buffer, not a parameter: saved in state_dict, moved by .to(), never trained
        self.register_buffer("pe", pe.unsqueeze(0).to(torch.get_default_dtype()))  # (1, max_len, D)

    def forward(self, x: Tensor) -> Tensor:
        T = x.size(1)
        return self.dropout(x + self.pe[:, :T])  # (B, T, D) + (1, T, D) -> (B, T, D)
