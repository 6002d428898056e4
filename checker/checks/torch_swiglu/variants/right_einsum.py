import torch
from torch import nn


class SwiGLU(nn.Module):
    def __init__(self, d_model, d_ff, bias=False):
        super().__init__()
        self.W_gate = nn.Linear(d_model, d_ff, bias=bias)
        self.W_up = nn.Linear(d_model, d_ff, bias=bias)
        self.W_down = nn.Linear(d_ff, d_model, bias=bias)
        self.act = nn.SiLU()

    @staticmethod
    def _linear(layer, x):
        y = torch.einsum("...i,oi->...o", x, layer.weight)
        return y if layer.bias is None else y + layer.bias

    def forward(self, x):
        hidden = self.act(self._linear(self.W_gate, x)) * self._linear(self.W_up, x)
        return self._linear(self.W_down, hidden)
