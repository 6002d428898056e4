# expect: ignores the biases
import torch
import torch.nn.functional as F
from torch import nn


class SwiGLU(nn.Module):
    def __init__(self, d_model, d_ff, bias=False):
        super().__init__()
        self.W_gate = nn.Linear(d_model, d_ff, bias=bias)
        self.W_up = nn.Linear(d_model, d_ff, bias=bias)
        self.W_down = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x):
        gate = x @ self.W_gate.weight.T
        up = x @ self.W_up.weight.T
        return (F.silu(gate) * up) @ self.W_down.weight.T
