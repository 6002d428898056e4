# followup: PEFT's kaiming_uniform_
import math
import torch
from torch import Tensor, nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float, dropout: float = 0.0):
        super().__init__()
        self.base = base
        self.r, self.alpha = r, alpha
        self.base.weight.requires_grad_(False)
        if self.base.bias is not None:
            self.base.bias.requires_grad_(False)
        # PEFT init_lora_weights="gaussian": A ~ N(0, 1/r)
        self.lora_A = nn.Parameter(torch.randn(r, base.in_features) / r)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scaling = alpha / r
        self.drop = nn.Dropout(dropout)
        self.merged = False

    def forward(self, x: Tensor) -> Tensor:
        y = self.base(x)
        if self.merged:
            return y
        h = torch.einsum("...i,ri->...r", self.drop(x), self.lora_A)
        return y + self.scaling * torch.einsum("...r,or->...o", h, self.lora_B)

    @torch.no_grad()
    def merge(self) -> None:
        if not self.merged:
            self.base.weight.add_(self.scaling * torch.einsum("or,ri->oi", self.lora_B, self.lora_A))
            self.merged = True

    @torch.no_grad()
    def unmerge(self) -> None:
        if self.merged:
            self.base.weight.sub_(self.scaling * torch.einsum("or,ri->oi", self.lora_B, self.lora_A))
            self.merged = False
