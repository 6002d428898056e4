# expect: half to even
"""Rounding half up with floor(x + 0.5), as many hand-written quantisers do."""
import torch


def quantize_int8(W):
    absmax = W.abs().amax(dim=1, keepdim=True)
    scale = torch.where(absmax > 0, absmax / 127.0, torch.ones_like(absmax))
    q = torch.floor(W / scale + 0.5).clamp(-127, 127).to(torch.int8)
    return q, scale


def dequantize_int8(q, scale):
    return q * scale


def int8_matmul(qx, sx, qw, sw):
    acc = torch.matmul(qx.to(torch.int32), qw.to(torch.int32).t())
    return acc * sx * sw.t()

