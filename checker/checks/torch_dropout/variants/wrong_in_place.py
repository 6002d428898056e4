# expect: in-place operation
import torch


def dropout(x, p=0.5, training=True, generator=None):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return torch.zeros_like(x)
    keep = (torch.rand(x.shape, generator=generator, dtype=x.dtype, device=x.device) >= p).to(x.dtype)
    return x.mul_(keep).div_(1 - p)
