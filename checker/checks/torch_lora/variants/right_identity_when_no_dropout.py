"""PEFT-like: nn.Identity when dropout is 0, F.linear twice, merge through .data with a get_delta_weight."""
import math
import torch
import torch.nn.functional as F
from torch import Tensor, nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float, dropout: float = 0.0):
        super().__init__()
        self.base = base
        self.base.requires_grad_(False)
        self.r, self.alpha = r, alpha
        self.lora_A = nn.Parameter(base.weight.new_zeros(r, base.in_features))
        self.lora_B = nn.Parameter(base.weight.new_zeros(base.out_features, r))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.scaling = self.alpha / self.r
        # PEFT: nn.Identity when p == 0
        self.lora_dropout = nn.Dropout(p=dropout) if dropout > 0.0 else nn.Identity()
        self.merged = False

    def get_delta_weight(self) -> torch.Tensor:
        return (self.lora_B @ self.lora_A) * self.scaling

    def forward(self, x: Tensor) -> Tensor:
        result = self.base(x)
        if not self.merged:
            result = result + F.linear(F.linear(self.lora_dropout(x), self.lora_A), self.lora_B) * self.scaling
        return result

    def merge(self) -> None:
        if self.merged:
            return
        self.base.weight.data += self.get_delta_weight().detach()
        self.merged = True

    def unmerge(self) -> None:
        if not self.merged:
            return
        self.base.weight.data -= self.get_delta_weight().detach()
        self.merged = False
