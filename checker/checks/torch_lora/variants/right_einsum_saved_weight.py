"""einsum for the low-rank path; merge() keeps the original weight and unmerge() puts it back, so the
round trip is exact."""
import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha, dropout=0.0):
        super().__init__()
        self.base = base.requires_grad_(False)
        bound = 1 / math.sqrt(base.in_features)
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features).uniform_(-bound, bound))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scale = alpha / r
        self.drop = nn.Dropout(dropout)
        self._saved = None

    def forward(self, x):
        out = self.base(x)
        if self._saved is None:
            low = torch.einsum("...i,ri->...r", self.drop(x), self.lora_A)
            out = out + self.scale * torch.einsum("...r,or->...o", low, self.lora_B)
        return out

    @torch.no_grad()
    def merge(self):
        if self._saved is None:
            self._saved = self.base.weight.detach().clone()
            self.base.weight.copy_(self._saved + self.scale * torch.einsum("or,ri->oi", self.lora_B, self.lora_A))

    @torch.no_grad()
    def unmerge(self):
        if self._saved is not None:
            self.base.weight.copy_(self._saved)
            self._saved = None
