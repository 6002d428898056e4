# expect: rsLoRA's scale
"""rsLoRA's scale alpha / √r (PEFT's use_rslora=True) instead of the kata's alpha / r."""
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
        self.scaling = alpha / math.sqrt(r)  # rank-stabilised: keeps the update's size as r grows
        self.lora_dropout = nn.Dropout(p=dropout) if dropout > 0.0 else nn.Identity()
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.merged = False

    def get_delta_weight(self):
        return (self.lora_B @ self.lora_A) * self.scaling

    def merge(self):
        if not self.merged:
            with torch.no_grad():
                self.base.weight += self.get_delta_weight()
            self.merged = True

    def unmerge(self):
        if self.merged:
            with torch.no_grad():
                self.base.weight -= self.get_delta_weight()
            self.merged = False

    def forward(self, x):
        result = self.base(x)
        if self.merged:
            return result
        return result + F.linear(F.linear(self.lora_dropout(x), self.lora_A), self.lora_B) * self.scaling
