# expect: a = 1.25331 = √(π/2)
"""GELU's tanh approximation with √(π/2) where √(2/π) belongs."""
import math

import torch
from torch import nn


class NewGELU(nn.Module):
    """The tanh GELU, written out by hand (as in minGPT), with the square root's fraction upside down."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(math.pi / 2.0) * (x + 0.044715 * torch.pow(x, 3.0))))


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__()
        if activation == "relu":
            self.act = nn.ReLU()
        elif activation == "gelu":
            self.act = NewGELU()
        else:
            raise ValueError(f"unsupported activation: {activation}")
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.fc2(self.dropout(self.act(self.fc1(x))))
