"""One 2x2 rotation matrix per (position, pair), applied with einsum."""
import torch


def apply_rope(x, positions, layout="half", base=10000.0):
    if layout == "half":
        a, b = x[..., : x.size(-1) // 2], x[..., x.size(-1) // 2:]
    elif layout == "interleaved":
        a, b = x[..., ::2], x[..., 1::2]
    else:
        raise ValueError("layout must be 'half' or 'interleaved'")
    d_k = x.size(-1)
    exponent = torch.arange(0, d_k, 2, device=x.device).to(x.dtype) / d_k
    angle = positions.to(x.dtype).unsqueeze(-1) / base ** exponent  # (T, d_k/2)
    c, s = torch.cos(angle), torch.sin(angle)
    R = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (T, d_k/2, 2, 2)
    pairs = torch.stack([a, b], dim=-1)  # (B, H, T, d_k/2, 2)
    out = torch.einsum("tpij,bhtpj->bhtpi", R, pairs)
    if layout == "half":
        return torch.cat([out[..., 0], out[..., 1]], dim=-1)
    return out.reshape(x.shape)
