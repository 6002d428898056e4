# expect: acc / (sx * sw.T)
"""Divides the int32 sums by the scales, as if they were 127 / absmax (the quantiser's factor) rather than the step."""
import torch


def quantize_int8(W):
    absmax = W.abs().amax(dim=1, keepdim=True)
    scale = torch.where(absmax > 0, absmax / 127, torch.ones_like(absmax))
    q = torch.round(W / scale).clamp(-127, 127).to(torch.int8)
    return q, scale


def dequantize_int8(q, scale):
    return q * scale


def int8_matmul(qx, sx, qw, sw):
    acc = qx.to(torch.int32) @ qw.to(torch.int32).T
    return acc / (sx * sw.T)
