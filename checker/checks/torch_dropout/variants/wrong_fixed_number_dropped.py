# expect: exactly round(p · N) elements are zero
import torch
from torch import Tensor


def dropout(x: Tensor, p: float = 0.5, training: bool = True, generator: torch.Generator | None = None) -> Tensor:
    """Drops exactly round(p * n) elements, chosen by a random permutation."""
    if p < 0 or p > 1:
        raise ValueError("p must be in [0, 1]")
    if not training or p == 0:
        return x
    if p == 1:
        return torch.zeros_like(x)
    n = x.numel()
    idx = torch.randperm(n, generator=generator, device=x.device)[: round(p * n)]
    keep = torch.ones(n, dtype=x.dtype, device=x.device)
    keep[idx] = 0
    return x * keep.view(x.shape) / (1 - p)
