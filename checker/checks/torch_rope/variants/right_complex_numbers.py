"""Meta's LLaMA: pairs as complex numbers times e^(i p theta); 'half' through a column permutation."""
import math

import torch


def apply_rope(x, positions, layout="half", base=10000.0):
    if layout not in ("half", "interleaved"):
        raise ValueError(f"unknown layout {layout!r}")
    d_k = x.size(-1)
    i = torch.arange(d_k // 2, dtype=x.dtype, device=x.device)
    theta = torch.exp(-2 * i * math.log(base) / d_k)
    angle = torch.outer(positions.to(x.dtype), theta)
    rotation = torch.polar(torch.ones_like(angle), angle)  # e^(i angle), (T, d_k/2)
    if layout == "half":  # (x_i, x_{i+d/2}) -> complex x_i + j x_{i+d/2}
        z = torch.complex(x[..., : d_k // 2], x[..., d_k // 2:])
        z = z * rotation
        return torch.cat([z.real, z.imag], dim=-1)
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], d_k // 2, 2).contiguous())
    return torch.view_as_real(z * rotation).flatten(-2)
