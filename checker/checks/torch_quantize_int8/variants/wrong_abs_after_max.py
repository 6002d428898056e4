# expect: abs
"""abs() taken after the max, not before it: |max(W)| misses a negative outlier larger than the max."""
import torch


def quantize_int8(W):
    absmax = W.max(dim=1, keepdim=True).values.abs()
    scale = torch.where(absmax > 0, absmax / 127, torch.ones_like(absmax))
    q = torch.round(W / scale).clamp(-127, 127).to(torch.int8)
    return q, scale


def dequantize_int8(q, scale):
    return q * scale


def int8_matmul(qx, sx, qw, sw):
    acc = torch.matmul(qx.to(torch.int32), qw.to(torch.int32).t())
    return acc * sx * sw.t()

