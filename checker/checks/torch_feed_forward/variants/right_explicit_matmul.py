"""Seed 000's x @ W1 + b1 form, using the nn.Linear weights explicitly (weight is (out, in))."""
import torch
import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__()
        acts = {"relu": F.relu, "gelu": F.gelu}
        try:
            self.act = acts[activation]
        except KeyError:
            raise ValueError(activation) from None
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        hidden = self.act(x @ self.fc1.weight.T + self.fc1.bias)
        return self.dropout(hidden) @ self.fc2.weight.T + self.fc2.bias
