import torch
from torch import nn


class SwiGLU(nn.Module):
    """LLaMA's FeedForward: w2(silu(w1(x)) * w3(x)), with SiLU written as h * sigmoid(h)."""

    def __init__(self, d_model, d_ff, bias=False):
        super().__init__()
        self.W_gate = nn.Linear(d_model, d_ff, bias=bias)  # w1
        self.W_down = nn.Linear(d_ff, d_model, bias=bias)  # w2
        self.W_up = nn.Linear(d_model, d_ff, bias=bias)  # w3

    def forward(self, x):
        g = self.W_gate(x)
        return self.W_down(g * torch.sigmoid(g) * self.W_up(x))
