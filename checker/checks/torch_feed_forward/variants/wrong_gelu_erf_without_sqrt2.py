# expect: the argument of erf is x/√2
"""Hand-written GELU: 0.5·x·(1 + erf(x / 2)), the √2 lost."""

from torch import Tensor, nn

import torch


class _GELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1 + torch.erf(x / 2))


ACTIVATIONS = {"relu": nn.ReLU, "gelu": _GELU}  # nn.GELU() is the exact erf form


class FeedForward(nn.Module):
    """Expands each position to d_ff, applies the activation, projects back to d_model."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
        self.fc1 = nn.Linear(d_model, d_ff)  # weight (d_ff, D)
        self.fc2 = nn.Linear(d_ff, d_model)  # weight (D, d_ff)
        self.act = ACTIVATIONS[activation]()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        hidden = self.act(self.fc1(x))  # (..., D) @ (D, d_ff) -> (..., d_ff)
        return self.fc2(self.dropout(hidden))  # (..., d_ff) @ (d_ff, D) -> (..., D)
