# expect: q / scale
"""Dequantises by dividing by the scale, undoing the quantisation's direction twice."""
import torch


def quantize_int8(W):
    absmax = W.abs().amax(dim=1, keepdim=True)
    scale = torch.where(absmax > 0, absmax / 127.0, torch.ones_like(absmax))
    q = torch.round(W / scale).clamp(-127, 127).to(torch.int8)
    return q, scale


def dequantize_int8(q, scale):
    return q / scale


def int8_matmul(qx, sx, qw, sw):
    return (qx.int() @ qw.int().T) * (sx * sw.T)
