"""masked_fill on a float32 noise tensor (no dtype given), x.clone() in eval, x * 0.0 at p = 1."""
import torch
from torch import Tensor


def dropout(x: Tensor, p: float = 0.5, training: bool = True, generator: torch.Generator | None = None) -> Tensor:
    if p < 0 or p > 1:
        raise ValueError("p must be in [0, 1]")
    if not training:
        return x.clone()
    if p == 1:
        return x * 0.0
    noise = torch.rand(*x.shape, generator=generator, device=x.device)
    drop = noise < p
    return x.masked_fill(drop, 0.0) / (1 - p)
