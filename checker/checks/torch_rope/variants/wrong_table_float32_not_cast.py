# expect: bfloat16 inputs gave output as torch.float32
"""The table of angles built in float32, as Hugging Face builds inv_freq, and never cast back: float16 and bfloat16 inputs come back float32."""
import torch


def apply_rope(x, positions, layout="half", base=10000.0):
    if layout not in ("half", "interleaved"):
        raise ValueError(layout)
    d = x.size(-1)
    inv = 1.0 / (base ** (torch.arange(0, d, 2, device=x.device).float() / d))
    ang = positions.float()[:, None] * inv
    cos, sin = ang.cos(), ang.sin()
    if x.dtype == torch.float64:
        cos, sin = cos.double(), sin.double()
    if layout == "half":
        a, b = x.chunk(2, dim=-1)
        return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
