"""HF LLaMA's inv_freq, copied with its .float(): float32 frequencies even for float64 x."""
import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x, positions, layout="half", base=10000.0):
    if layout not in ("half", "interleaved"):
        raise ValueError(layout)
    d_k = x.size(-1)
    inv_freq = 1.0 / (base ** (torch.arange(0, d_k, 2, dtype=torch.int64, device=x.device).float() / d_k))
    freqs = positions.to(x.dtype)[:, None] * inv_freq.to(x.dtype)
    if layout == "half":
        emb = torch.cat([freqs, freqs], dim=-1)
        return x * emb.cos() + rotate_half(x) * emb.sin()
    emb = freqs.repeat_interleave(2, dim=-1)
    rotated = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return x * emb.cos() + rotated * emb.sin()
