# expect: nn.Linear accepts any leading axes
"""Flattens with B, T, D = x.shape: a (T, D) input breaks it."""
import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__()
        if activation not in ("relu", "gelu"):
            raise ValueError(activation)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        self.act = F.relu if activation == "relu" else F.gelu
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, D = x.shape
        h = self.dropout(self.act(self.fc1(x.reshape(B * T, D))))
        return self.fc2(h).reshape(B, T, D)
