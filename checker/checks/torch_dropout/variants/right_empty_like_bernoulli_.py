"""PyTorch's own decomposition: torch.empty_like(x).bernoulli_(1 - p, generator=...), a scale of 0 at p = 1."""
import torch
from torch import Tensor


def dropout(x: Tensor, p: float = 0.5, training: bool = True, generator: torch.Generator | None = None) -> Tensor:
    """The decomposition PyTorch itself uses: an empty tensor filled with bernoulli_(1 - p)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training:
        return x
    keep = torch.empty_like(x).bernoulli_(1.0 - p, generator=generator)
    scale = 1.0 / (1.0 - p) if p < 1.0 else 0.0
    return x * keep * scale
