# expect: your activation is a sigmoid
"""A sigmoid in place of ReLU/GELU."""
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

    def forward(self, x):
        return self.fc2(self.dropout(torch.sigmoid(self.fc1(x))))
