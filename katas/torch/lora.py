"""LoRA (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models"): a frozen nn.Linear
plus a trainable low-rank update, as PEFT and loralib write it.

Shape legend:
    ...    any leading axes: (B, T), (N,), ...
    D_in   base.in_features
    D_out  base.out_features
    r      the rank of the update, much smaller than D_in and D_out

Implement LoRALinear:

    y = base(x) + scaling · B (A dropout(x))        scaling = alpha / r

__init__(base, r, alpha, dropout=0.0):
    base     an nn.Linear (D_in -> D_out), kept as self.base and FROZEN: its weight and bias must
             not require grad; only lora_A and lora_B train
    lora_A   nn.Parameter (r, D_in), random: nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5)),
             as PEFT does (U(-1/√D_in, 1/√D_in), nn.Linear's default)
    lora_B   nn.Parameter (D_out, r), zeros: a fresh LoRALinear computes exactly base(x)
    scaling  alpha / r
    dropout  nn.Dropout(dropout) on the input of the LoRA path only (never on base's path)
    (the checker loads weights by these names: base.weight, base.bias, lora_A, lora_B)
forward(x):
    x        (..., D_in) float tensor
    returns  (..., D_out), x's dtype
merge():   adds scaling · lora_B @ lora_A, (D_out, D_in), to base.weight in place (under no_grad); from
           then on forward returns base(x) alone. Merging twice changes nothing.
unmerge(): subtracts it again, restoring base.weight; forward adds the LoRA path again.
The merged layer computes what the unmerged one does (to rounding).

Rules: do not modify x.
Off limits: peft, loralib.
"""

import math

import torch
from torch import Tensor, nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float, dropout: float = 0.0):
        super().__init__()
        self.base = base
        self.r, self.alpha = r, alpha
        raise NotImplementedError("freeze base, create lora_A (random) and lora_B (zeros), scaling, dropout")

    def forward(self, x: Tensor) -> Tensor:
        raise NotImplementedError("write LoRALinear.forward: base(x) plus the scaled low-rank path")

    def merge(self) -> None:
        raise NotImplementedError("fold scaling * lora_B @ lora_A into base.weight")

    def unmerge(self) -> None:
        raise NotImplementedError("take scaling * lora_B @ lora_A out of base.weight again")
