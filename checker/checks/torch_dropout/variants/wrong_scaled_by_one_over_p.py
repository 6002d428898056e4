# expect: the kept elements equal x / p
import torch
from torch import Tensor


def dropout(x: Tensor, p: float = 0.5, training: bool = True, generator: torch.Generator | None = None) -> Tensor:
    if p < 0 or p > 1:
        raise ValueError("p must be in [0, 1]")
    if not training or p == 0:
        return x
    if p == 1:
        return torch.zeros_like(x)
    keep = torch.rand(x.shape, generator=generator, dtype=x.dtype, device=x.device) > p
    return x * keep / p
