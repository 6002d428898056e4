# expect: row of zeros
"""bitsandbytes' formula taken as it is: a row of zeros divides 0 by 0."""
import torch


def quantize_int8(W):
    absmax = W.abs().amax(dim=1, keepdim=True)
    scale = absmax / 127
    q = torch.round(W / scale).to(torch.int8)
    return q, scale


def dequantize_int8(q, scale):
    return q * scale


def int8_matmul(qx, sx, qw, sw):
    acc = torch.matmul(qx.to(torch.int32), qw.to(torch.int32).t())
    return acc * sx * sw.t()

