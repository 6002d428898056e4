# expect: modified its input
"""Writes the rotated halves back into x: the caller's queries change."""
import torch


def apply_rope(x, positions, layout="half", base=10000.0):
    if layout not in ("half", "interleaved"):
        raise ValueError(layout)
    d_k = x.size(-1)
    theta = base ** (-torch.arange(0, d_k, 2, dtype=x.dtype, device=x.device) / d_k)
    angle = positions.to(x.dtype)[:, None] * theta
    cos, sin = angle.cos(), angle.sin()
    if layout == "half":
        ia, ib = slice(0, d_k // 2), slice(d_k // 2, d_k)
    else:
        ia, ib = slice(0, d_k, 2), slice(1, d_k, 2)
    a, b = x[..., ia].clone(), x[..., ib].clone()
    with torch.no_grad():
        x[..., ia] = a * cos - b * sin
        x[..., ib] = a * sin + b * cos
    return x
