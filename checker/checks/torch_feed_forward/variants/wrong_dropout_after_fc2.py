# expect: the output is all zeros, so dropout acts after fc2
"""Dropout on the output of fc2, as a residual block would do."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        if activation not in ("relu", "gelu"):
            raise ValueError(activation)
        self.act = nn.ReLU() if activation == "relu" else nn.GELU()

    def forward(self, x):
        return self.dropout(self.fc2(self.act(self.fc1(x))))
