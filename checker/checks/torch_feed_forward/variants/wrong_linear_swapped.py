# expect: the wrong way round
"""nn.Linear's arguments read as (out, in): fc1 and fc2 are built backwards (and applied as x @ W)."""
import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__()
        if activation not in ("relu", "gelu"):
            raise ValueError(activation)
        self.fc1 = nn.Linear(d_ff, d_model)
        self.fc2 = nn.Linear(d_model, d_ff)
        self.act = F.relu if activation == "relu" else F.gelu
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.act(x @ self.fc1.weight + self.fc2.bias)) @ self.fc2.weight + self.fc1.bias
