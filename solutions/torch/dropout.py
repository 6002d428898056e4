"""Inverted dropout by hand (Srivastava et al. 2014, as torch.nn.functional.dropout computes it) (reference answer).

Shape legend:
    ...  any axes: (B, T, D), (N, D), ...

Training: each element is kept with probability 1 - p, independently, and scaled by 1 / (1 - p), so
the expectation of every element is unchanged; evaluation: the identity.
"""

import torch
from torch import Tensor


def dropout(x: Tensor, p: float = 0.5, training: bool = True, generator: torch.Generator | None = None) -> Tensor:
    """Zero each element with probability p and scale the survivors by 1 / (1 - p); identity in eval."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    # 1) evaluation, or nothing to drop: the identity (inverted dropout scales at training time only)
    if not training or p == 0.0:
        return x
    # 2) everything dropped: zeros, never 0 / 0
    if p == 1.0:
        return x * 0.0  # (...) zeros, still in the graph
    # 3) a Bernoulli(1 - p) mask of x's shape, dtype and device, drawn with the caller's generator
    keep = torch.bernoulli(torch.full_like(x, 1 - p), generator=generator)  # (...) 1 = kept
    return x * keep / (1 - p)  # (...) survivors scaled by 1 / (1 - p)
