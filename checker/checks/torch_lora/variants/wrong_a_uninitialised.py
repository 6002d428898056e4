# expect: A starts at random
"""lora_A made with torch.empty and never initialised (the init line forgotten)."""
import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float, dropout: float = 0.0):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scaling = alpha / r
        self.dropout = nn.Dropout(dropout)
        self.merged = False

    def forward(self, x):
        out = self.base(x)
        if not self.merged:
            out = out + self.dropout(x) @ self.lora_A.T @ self.lora_B.T * self.scaling
        return out

    def merge(self):
        if not self.merged:
            self.base.weight.data += self.lora_B @ self.lora_A * self.scaling
            self.merged = True

    def unmerge(self):
        if self.merged:
            self.base.weight.data -= self.lora_B @ self.lora_A * self.scaling
            self.merged = False
