import torch
import torch.nn.functional as F
from torch import nn


class SwiGLU(nn.Module):
    """Gate and up projections computed in one matmul (as fused kernels do), then split."""

    def __init__(self, d_model, d_ff, bias=False):
        super().__init__()
        self.W_gate = nn.Linear(d_model, d_ff, bias=bias)
        self.W_up = nn.Linear(d_model, d_ff, bias=bias)
        self.W_down = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x):
        weight = torch.cat([self.W_gate.weight, self.W_up.weight], dim=0)  # (2 d_ff, D)
        bias = None if self.W_gate.bias is None else torch.cat([self.W_gate.bias, self.W_up.bias])
        gate, up = F.linear(x, weight, bias).chunk(2, dim=-1)  # (..., d_ff) each
        return self.W_down(F.silu(gate) * up)
