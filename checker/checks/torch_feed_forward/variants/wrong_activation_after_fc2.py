# expect: also apply the activation to the output of fc2
"""An activation after each linear layer."""
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
        return self.act(self.fc2(self.dropout(self.act(self.fc1(x)))))
