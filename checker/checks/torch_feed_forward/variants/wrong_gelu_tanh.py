# expect: tanh approximation
"""GELU written with the tanh approximation (GPT-2 style)."""
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
        self.activation = activation

    def forward(self, x):
        h = self.fc1(x)
        if self.activation == "gelu":
            h = 0.5 * h * (1 + torch.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h ** 3)))
        else:
            h = F.relu(h)
        return self.fc2(self.dropout(h))
