# expect: pairs the other layout's coordinates
"""Reads the layouts backwards: 'half' takes the even/odd columns, 'interleaved' the two halves."""
import torch


def apply_rope(x, positions, layout="half", base=10000.0):
    if layout not in ("half", "interleaved"):
        raise ValueError(layout)
    d_k = x.size(-1)
    theta = base ** (-torch.arange(0, d_k, 2, dtype=x.dtype, device=x.device) / d_k)
    angle = positions.to(x.dtype)[:, None] * theta
    cos, sin = angle.cos(), angle.sin()
    if layout == "interleaved":
        a, b = x[..., : d_k // 2], x[..., d_k // 2:]
        return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
