"""The mask is made and scaled in place (bernoulli_, div_): only the new tensor, never x, is modified."""
import torch


def dropout(x, p=0.5, training=True, generator=None):
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training:
        return x
    if p == 1:
        return x * 0
    mask = torch.empty_like(x).bernoulli_(1 - p, generator=generator).div_(1 - p)
    return x * mask
