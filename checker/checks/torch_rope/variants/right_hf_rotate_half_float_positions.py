import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x, positions, layout="half", base=10000.0):
    d = x.size(-1)
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, device=x.device).float() / d))
    freqs = positions[:, None].float() * inv_freq[None, :]
    if layout == "half":
        emb = torch.cat([freqs, freqs], dim=-1)
        return x * emb.cos().to(x.dtype) + rotate_half(x) * emb.sin().to(x.dtype)
    if layout == "interleaved":
        emb = freqs.repeat_interleave(2, dim=-1)
        x1, x2 = x[..., 0::2], x[..., 1::2]
        rot = torch.stack([-x2, x1], dim=-1).flatten(-2)
        return x * emb.cos().to(x.dtype) + rot * emb.sin().to(x.dtype)
    raise ValueError(layout)
