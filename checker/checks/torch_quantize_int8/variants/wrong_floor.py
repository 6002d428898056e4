# expect: floor
"""Rounding down with floor: every weight lands on the level below it."""
import torch


def quantize_int8(W):
    absmax = W.abs().max(dim=1, keepdim=True).values
    scale = absmax / 127
    scale[absmax == 0] = 1.0
    q = torch.floor(W / scale).clamp(-127, 127).to(torch.int8)
    return q, scale


def dequantize_int8(q, scale):
    return q * scale


def int8_matmul(qx, sx, qw, sw):
    acc = torch.matmul(qx.to(torch.int32), qw.to(torch.int32).t())
    return acc * sx * sw.t()

