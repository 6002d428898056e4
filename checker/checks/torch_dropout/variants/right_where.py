"""torch.where on a uniform draw: survivors x / (1 - p), the rest 0; p = 1 keeps nothing without dividing."""
import torch


def dropout(x, p=0.5, training=True, generator=None):
    if not (0.0 <= p <= 1.0):
        raise ValueError("p must lie in [0, 1]")
    if not training or p == 0:
        return x
    u = torch.rand(x.shape, generator=generator, dtype=x.dtype, device=x.device)
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return torch.where(u >= p, x * scale, torch.zeros_like(x))
