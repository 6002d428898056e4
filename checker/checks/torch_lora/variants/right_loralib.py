"""Microsoft's loralib Linear (loralib/layers.py), as a wrapper: transpose(0, 1) products, F.linear on
the merged weight, and merge/unmerge through .data."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float, dropout: float = 0.0):
        super().__init__()
        self.base = base
        self.base.weight.requires_grad = False
        if self.base.bias is not None:
            self.base.bias.requires_grad = False
        self.lora_A = nn.Parameter(self.base.weight.new_zeros((r, base.in_features)))
        self.lora_B = nn.Parameter(self.base.weight.new_zeros((base.out_features, r)))
        self.scaling = alpha / r
        self.lora_dropout = nn.Dropout(p=dropout)
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.merged = False

    def merge(self):
        if not self.merged:
            self.base.weight.data += (self.lora_B @ self.lora_A) * self.scaling
            self.merged = True

    def unmerge(self):
        if self.merged:
            self.base.weight.data -= (self.lora_B @ self.lora_A) * self.scaling
            self.merged = False

    def forward(self, x):
        result = F.linear(x, self.base.weight, bias=self.base.bias)
        if not self.merged:
            result += (self.lora_dropout(x) @ self.lora_A.transpose(0, 1) @ self.lora_B.transpose(0, 1)) * self.scaling
        return result
