# followup: float32 arithmetic inside was recognised
"""The gate's activation in float32, cast back: float32 rounding on float64 input."""
import torch.nn.functional as F
from torch import Tensor, nn


class SwiGLU(nn.Module):
    """A gated feed-forward network: a SiLU gate multiplies a linear branch, then projects back."""

    def __init__(self, d_model: int, d_ff: int, bias: bool = False):
        super().__init__()
        self.W_gate = nn.Linear(d_model, d_ff, bias=bias)  # weight (d_ff, D), LLaMA's w1
        self.W_up = nn.Linear(d_model, d_ff, bias=bias)  # weight (d_ff, D), LLaMA's w3
        self.W_down = nn.Linear(d_ff, d_model, bias=bias)  # weight (D, d_ff), LLaMA's w2

    def forward(self, x: Tensor) -> Tensor:
        # 1) the gate: SiLU of one projection, (..., D) @ (D, d_ff) -> (..., d_ff)
        gate = F.silu(self.W_gate(x).float()).type_as(x)  # the activation in float32
        # 2) gate the linear branch elementwise, (..., d_ff) * (..., d_ff)
        hidden = gate * self.W_up(x)
        # 3) project back, (..., d_ff) @ (d_ff, D) -> (..., D)
        return self.W_down(hidden)
