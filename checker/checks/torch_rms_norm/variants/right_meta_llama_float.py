# followup: Meta's LLaMA (x.float())
"""Meta's LLaMA RMSNorm (llama/model.py), renamed to the kata's RMSNorm(d_model, eps): _norm(x.float()).type_as(x)."""
import torch
from torch import nn


class RMSNorm(torch.nn.Module):
    def __init__(self, d_model: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight
