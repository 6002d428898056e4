# expect: on a rank-2 input
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
        B, T, D = x.shape
        h = x.reshape(B * T, D)
        out = self.W_down(F.silu(self.W_gate(h)) * self.W_up(h))
        return out.reshape(B, T, D)
