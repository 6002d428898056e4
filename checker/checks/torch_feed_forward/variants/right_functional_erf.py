"""Functional style: a hand-written erf GELU, torch.clamp for ReLU, F.dropout with self.training."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__()
        if activation not in ("relu", "gelu"):
            raise ValueError(f"unknown activation {activation}")
        self.activation = activation
        self.p = dropout
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        h = self.fc1(x)
        if self.activation == "gelu":
            h = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
        else:
            h = torch.clamp(h, min=0)
        h = F.dropout(h, self.p, self.training)
        return self.fc2(h)
