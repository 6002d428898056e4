# expect: sublayer is called 2 times
"""A defensive shape assertion that runs the sublayer a second time (twice the cost; with dropout inside
the sublayer, the assertion and the result would even see different masks)."""
from typing import Callable

from torch import Tensor, nn


class AddNorm(nn.Module):
    def __init__(self, d_model: int, pre_norm: bool = False, dropout: float = 0.0, eps: float = 1e-5):
        super().__init__()
        self.pre_norm = pre_norm
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        h = self.norm(x) if self.pre_norm else x
        assert sublayer(h).shape == x.shape, "the sublayer must keep the shape (..., D)"
        out = x + self.dropout(sublayer(h))
        return out if self.pre_norm else self.norm(out)
