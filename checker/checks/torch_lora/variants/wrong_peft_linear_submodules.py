# expect: has no parameter lora_A (3, 7), lora_B (6, 3); it has
import math
import torch
from torch import Tensor, nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float, dropout: float = 0.0):
        super().__init__()
        self.base = base
        self.r, self.alpha = r, alpha
        for p in self.base.parameters():
            p.requires_grad = False
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B.weight)
        self.scaling = alpha / r
        self.dropout = nn.Dropout(dropout)
        self.merged = False

    def forward(self, x: Tensor) -> Tensor:
        out = self.base(x)
        if self.merged:
            return out
        return out + self.lora_B(self.lora_A(self.dropout(x))) * self.scaling

    def merge(self) -> None:
        if not self.merged:
            with torch.no_grad():
                self.base.weight += (self.lora_B.weight @ self.lora_A.weight) * self.scaling
            self.merged = True

    def unmerge(self) -> None:
        if self.merged:
            with torch.no_grad():
                self.base.weight -= (self.lora_B.weight @ self.lora_A.weight) * self.scaling
            self.merged = False
