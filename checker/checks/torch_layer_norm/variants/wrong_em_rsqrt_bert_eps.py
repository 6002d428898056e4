# expect: an argument replaced by a value written into the code
"""BERT's eps 1e-12 written into an rsqrt, whatever eps the constructor gets (error model)."""
import torch
from torch import Tensor, nn


class LayerNorm(nn.Module):
    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))

    def forward(self, x: Tensor) -> Tensor:
        var, mean = torch.var_mean(x, dim=-1, unbiased=False, keepdim=True)
        return (x - mean) * torch.rsqrt(var + 1e-12) * self.gamma + self.beta
