# expect: of the elements are zero; with p = 0.3
import torch
from torch import Tensor


def dropout(x: Tensor, p: float = 0.5, training: bool = True, generator: torch.Generator | None = None) -> Tensor:
    if p < 0 or p > 1:
        raise ValueError("p must be in [0, 1]")
    if not training or p == 0:
        return x
    if p == 1:
        return torch.zeros_like(x)
    keep = torch.randint(0, 2, x.shape, generator=generator, device=x.device).to(x.dtype)
    return x * keep / (1 - p)
