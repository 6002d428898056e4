# expect: raised no error, where the contract says it raises ValueError
"""Falls back to ReLU for any activation it does not know."""
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
        self.act = nn.GELU() if activation == "gelu" else nn.ReLU()

    def forward(self, x):
        return self.fc2(self.dropout(self.act(self.fc1(x))))
