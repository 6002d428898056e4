# expect: your frequencies are base^(-i/d_k)
"""theta_i = base^(-i/d_k) with i the pair index: the factor 2 of 2i/d_k is lost."""
import torch


def apply_rope(x, positions, layout="half", base=10000.0):
    if layout not in ("half", "interleaved"):
        raise ValueError(layout)
    d_k = x.size(-1)
    i = torch.arange(d_k // 2, dtype=x.dtype, device=x.device)
    theta = 1.0 / base ** (i / d_k)
    angle = torch.outer(positions.to(x.dtype), theta)
    cos, sin = angle.cos(), angle.sin()
    if layout == "half":
        a, b = x.chunk(2, dim=-1)
        return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
