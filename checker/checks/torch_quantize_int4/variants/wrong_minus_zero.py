# expect: - zero
"""The zero point subtracted when quantising, as when dequantising."""
import torch


def quantize_int4(W, group_size=128):
    N, K = W.shape
    if K % group_size:
        raise ValueError("group_size must divide K")
    g = W.view(N, K // group_size, group_size)
    lo = torch.clamp(g.min(dim=-1).values, max=0.0)
    hi = torch.clamp(g.max(dim=-1).values, min=0.0)
    both_zero = (lo == 0) & (hi == 0)
    lo[both_zero], hi[both_zero] = -1.0, 1.0
    scale = (hi - lo) / 15
    zero = torch.clamp(torch.round(-lo / scale), 0, 15)
    q = torch.clamp(torch.round(g / scale.unsqueeze(-1)) - zero.unsqueeze(-1), 0, 15)
    return q.view(N, K).to(torch.uint8), scale, zero


def pack_int4(q):
    if q.shape[1] % 2:
        raise ValueError("K must be even")
    return q[:, ::2] | (q[:, 1::2] << 4)


def unpack_int4(packed):
    low, high = packed & 0x0F, packed >> 4
    return torch.stack([low, high], dim=-1).flatten(1)


def dequantize_int4(q, scale, zero, group_size=128):
    N, K = q.shape
    if K % group_size:
        raise ValueError("group_size must divide K")
    g = q.view(N, K // group_size, group_size).to(scale.dtype)
    return ((g - zero.unsqueeze(-1)) * scale.unsqueeze(-1)).view(N, K)
