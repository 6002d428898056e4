# expect: rotation by MINUS the angle
"""HF style, but rotate_half returns cat([x2, -x1]): every pair turns the wrong way."""
import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x2, -x1], dim=-1)


def apply_rope(x, positions, layout="half", base=10000.0):
    if layout not in ("half", "interleaved"):
        raise ValueError(layout)
    d_k = x.size(-1)
    inv_freq = 1.0 / base ** (torch.arange(0, d_k, 2, dtype=x.dtype, device=x.device) / d_k)
    freqs = positions.to(x.dtype)[:, None] * inv_freq
    if layout == "half":
        emb = torch.cat([freqs, freqs], dim=-1)
        return x * emb.cos() + rotate_half(x) * emb.sin()
    emb = freqs.repeat_interleave(2, dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack([b, -a], dim=-1).flatten(-2)
    return x * emb.cos() + rotated * emb.sin()
