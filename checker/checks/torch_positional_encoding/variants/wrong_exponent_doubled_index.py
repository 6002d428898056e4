# expect: that is 2·2i: 2 * i where i already is the even column index
"""i = arange(0, d_model, 2) already holds 2i, and the paper's 2i is written again as 2 * i: the exponent doubles."""
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1).float()  # (max_len, 1)
        i = torch.arange(0, d_model, 2).float()  # the even columns
        div = torch.pow(10000.0, 2 * i / d_model)  # 10000^(2i / d_model)
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position / div)
        pe[:, 1::2] = torch.cos(position / div[: d_model // 2])
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        x = x + self.pe[:, : x.size(1)]
        return self.dropout(x)
