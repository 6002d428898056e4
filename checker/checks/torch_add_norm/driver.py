"""Sublayers the add_norm checks hand to the user's AddNorm.forward (pickled into the child).

They live in the checker package so the child can import them; their weights travel with them.
"""

import torch
from torch import nn


class TanhMLP(nn.Module):
    """A small fixed sublayer, fc2(tanh(fc1(x))): nonlinear, so sublayer(x) and sublayer(norm(x))
    differ in more than scale, and with an output scale unlike its input's."""

    def __init__(self, d_model: int, hidden: int, generator: torch.Generator, dtype=torch.float64, gain=1.5):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d_model, hidden), nn.Linear(hidden, d_model)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=generator, dtype=torch.float64) * gain / p.shape[-1] ** 0.5)
        self.to(dtype)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


class Zero(nn.Module):
    """A sublayer that contributes nothing: the output of Add & Norm is then norm(x) or x."""

    def forward(self, x):
        return torch.zeros_like(x)
