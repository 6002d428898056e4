# expect: 128
"""absmax / 128, as if int8 reached 128 on both sides: every level is 127/128 of the right one."""
import torch


def quantize_int8(W):
    absmax = W.abs().amax(dim=-1, keepdim=True)
    scale = torch.where(absmax > 0, absmax / 128, torch.ones_like(absmax))
    q = torch.round(W / scale).clamp(-127, 127).to(torch.int8)
    return q, scale


def dequantize_int8(q, scale):
    return q * scale


def int8_matmul(qx, sx, qw, sw):
    acc = torch.matmul(qx.to(torch.int32), qw.to(torch.int32).t())
    return acc * sx * sw.t()

