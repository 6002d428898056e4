# expect: dropout acts on the output of the LoRA path
import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha, dropout=0.0):
        super().__init__()
        self.base = base
        self.base.requires_grad_(False)
        self.scaling = alpha / r
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.dropout = nn.Dropout(dropout)
        self.merged = False

    def forward(self, x):
        y = self.base(x)
        if self.merged:
            return y
        return y + self.dropout(x @ self.lora_A.T @ self.lora_B.T * self.scaling)

    @torch.no_grad()
    def merge(self):
        if not self.merged:
            self.base.weight += self.lora_B @ self.lora_A * self.scaling
            self.merged = True

    @torch.no_grad()
    def unmerge(self):
        if self.merged:
            self.base.weight -= self.lora_B @ self.lora_A * self.scaling
            self.merged = False
