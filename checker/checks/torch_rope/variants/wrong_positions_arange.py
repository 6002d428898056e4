# expect: instead of the given positions
"""Builds the positions itself with torch.arange(T): right for a prompt, wrong for a decode step."""
import torch


def apply_rope(x, positions, layout="half", base=10000.0):
    if layout not in ("half", "interleaved"):
        raise ValueError(layout)
    T, d_k = x.size(-2), x.size(-1)
    theta = base ** (-torch.arange(0, d_k, 2, dtype=x.dtype, device=x.device) / d_k)
    angle = torch.arange(T, dtype=x.dtype, device=x.device)[:, None] * theta
    cos, sin = angle.cos(), angle.sin()
    if layout == "half":
        a, b = x[..., : d_k // 2], x[..., d_k // 2:]
        return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
