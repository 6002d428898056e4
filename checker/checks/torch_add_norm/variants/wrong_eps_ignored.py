# expect: an argument replaced by a value written into the code
"""nn.LayerNorm(d_model) without eps=eps."""
from typing import Callable

from torch import Tensor, nn


class AddNorm(nn.Module):
    """A residual connection around `sublayer` with a LayerNorm after the sum (post-LN) or before the sublayer (pre-LN)."""

    def __init__(self, d_model: int, pre_norm: bool = False, dropout: float = 0.0, eps: float = 1e-5):
        super().__init__()
        self.pre_norm = pre_norm
        self.norm = nn.LayerNorm(d_model)  # gamma (D,), beta (D,)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        if self.pre_norm:
            # pre-LN: normalize the sublayer's input; the residual path carries x untouched
            return x + self.dropout(sublayer(self.norm(x)))  # (..., D)
        # post-LN: add the sublayer's output to x, then normalize the sum
        return self.norm(x + self.dropout(sublayer(x)))  # (..., D)
