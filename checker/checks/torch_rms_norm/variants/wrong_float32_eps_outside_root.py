# expect: eps outside the square root
"""HF's float32 internals, but eps added to the root instead of under it: float32 does not excuse it."""
import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, d_model, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        rms = hidden_states.pow(2).mean(-1, keepdim=True).sqrt()
        hidden_states = hidden_states / (rms + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)
