# expect: where the contract says it raises ValueError
import torch
from torch import Tensor


def dropout(x: Tensor, p: float = 0.5, training: bool = True, generator: torch.Generator | None = None) -> Tensor:
    if not training or p <= 0:
        return x
    if p >= 1:
        return torch.zeros_like(x)
    keep = torch.rand(x.shape, generator=generator, dtype=x.dtype, device=x.device) > p
    return x * keep / (1 - p)
