"""A Python loop with math.sin/math.cos, kept as a float64 buffer and cast to x's dtype in forward."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.p = dropout
        rows = []
        for pos in range(max_len):
            row = []
            for j in range(d_model):
                angle = pos / 10000 ** ((j - j % 2) / d_model)
                row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
            rows.append(row)
        self.register_buffer("pe", torch.tensor(rows, dtype=torch.float64).unsqueeze(0))

    def forward(self, x):
        return F.dropout(x + self.pe[:, : x.size(1)].to(x.dtype), self.p, self.training)
