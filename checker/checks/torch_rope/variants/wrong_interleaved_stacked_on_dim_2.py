# expect: the axis a reduction, softmax, cumsum or concatenation runs over
"""Interleaved pairs stacked on dim=-2 before flattening: the output comes out in halves."""

import torch
from torch import Tensor


def apply_rope(x: Tensor, positions: Tensor, layout: str = "half", base: float = 10000.0) -> Tensor:
    """Rotate every pair of x (B, H, T, d_k) by positions (T,) * base^(-2i/d_k)."""
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    d_k = x.size(-1)
    # 1) one frequency per pair: theta_i = base^(-2i/d_k), i = 0 .. d_k/2 - 1
    theta = base ** (-torch.arange(0, d_k, 2, dtype=x.dtype, device=x.device) / d_k)  # (d_k/2,)
    # 2) the angle of every (position, pair)
    angle = positions.to(x.dtype)[:, None] * theta  # (T, 1) * (d_k/2,) -> (T, d_k/2)
    cos, sin = angle.cos(), angle.sin()  # (T, d_k/2), broadcast over (B, H)
    # 3) the two coordinates of every pair
    if layout == "half":
        a, b = x.chunk(2, dim=-1)  # the two halves, (B, H, T, d_k/2) each
    else:
        a, b = x[..., 0::2], x[..., 1::2]  # (B, H, T, d_k/2) each
    # 4) rotate: (a, b) -> (a cos - b sin, a sin + b cos)
    a, b = a * cos - b * sin, a * sin + b * cos
    if layout == "half":
        return torch.cat([a, b], dim=-1)  # (B, H, T, d_k)
    return torch.stack([a, b], dim=-2).flatten(-2)  # (B, H, T, d_k/2, 2) -> (B, H, T, d_k)
