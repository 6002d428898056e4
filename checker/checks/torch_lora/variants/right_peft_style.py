"""PEFT's LoraLayer (peft/tuners/lora/layer.py) reduced to one adapter, renamed to the kata's names:
F.linear calls, get_delta_weight(), and a merged guard."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha, dropout=0.0):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad = False
        self.r, self.lora_alpha = r, alpha
        self.scaling = alpha / r
        self.lora_dropout = nn.Dropout(p=dropout) if dropout > 0.0 else nn.Identity()
        self.lora_A = nn.Parameter(torch.zeros(r, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B)
        self.merged = False

    def get_delta_weight(self):
        return (self.lora_B @ self.lora_A) * self.scaling

    def merge(self):
        if self.merged:
            return
        self.base.weight.data += self.get_delta_weight().detach()
        self.merged = True

    def unmerge(self):
        if not self.merged:
            return
        self.base.weight.data -= self.get_delta_weight().detach()
        self.merged = False

    def forward(self, x):
        result = self.base(x)
        if not self.merged:
            result = result + F.linear(F.linear(self.lora_dropout(x), self.lora_A), self.lora_B) * self.scaling
        return result
