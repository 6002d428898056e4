# expect: lora_A and lora_B must keep requires_grad=True
"""Freezes the pretrained model with a loop over self.parameters() at the end of __init__, which freezes lora_A and
lora_B as well: nothing trains."""
import math

import torch
from torch import Tensor, nn


class LoRALinear(nn.Module):
    """A frozen base layer plus a trainable low-rank path B A, scaled by alpha / r."""

    def __init__(self, base: nn.Linear, r: int, alpha: float, dropout: float = 0.0):
        super().__init__()
        self.base = base
        self.r, self.alpha, self.scaling = r, alpha, alpha / r
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features))  # (r, D_in)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))  # (D_out, r): zero, so B A = 0 at start
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))  # as nn.Linear and PEFT: U(±1/√D_in)
        self.dropout = nn.Dropout(dropout)
        self.merged = False
        for p in self.parameters():  # the pretrained model is frozen
            p.requires_grad = False

    def delta_weight(self) -> Tensor:
        return self.lora_B @ self.lora_A * self.scaling  # (D_out, r) x (r, D_in) -> (D_out, D_in)

    def forward(self, x: Tensor) -> Tensor:
        # 1) the frozen path; once merged, it already holds the update
        y = self.base(x)  # (..., D_in) -> (..., D_out)
        if self.merged:
            return y
        # 2) the low-rank path: dropout on its input only, down to r, up to D_out, scaled
        h = self.dropout(x) @ self.lora_A.T  # (..., D_in) x (D_in, r) -> (..., r)
        return y + h @ self.lora_B.T * self.scaling  # (..., r) x (r, D_out) -> (..., D_out)

    @torch.no_grad()
    def merge(self) -> None:
        if not self.merged:
            self.base.weight += self.delta_weight()  # (D_out, D_in)
            self.merged = True

    @torch.no_grad()
    def unmerge(self) -> None:
        if self.merged:
            self.base.weight -= self.delta_weight()  # (D_out, D_in)
            self.merged = False
