"""torchao's affine quantisation primitives for the symmetric int8 case (torchao/quantization/quant_primitives.py:
choose_qparams_affine with MappingType.SYMMETRIC and quant_min=-127, quant_max=127 and block_size (1, K),
quantize_affine, dequantize_affine; int_scaled_matmul), re-typed: max(|min_neg|, max_pos) over each block,
scale = that / ((quant_max - quant_min) / 2), clamped to eps, a zero point of 0."""
import torch

quant_min, quant_max = -127, 127


def quantize_int8(W):
    min_val_neg = torch.clamp(W.amin(dim=-1, keepdim=True), max=0)
    max_val_pos = torch.clamp(W.amax(dim=-1, keepdim=True), min=0)
    max_val_pos = torch.max(-min_val_neg, max_val_pos)
    scale = max_val_pos / (float(quant_max - quant_min) / 2)
    scale = torch.clamp(scale, min=torch.finfo(W.dtype).eps)
    quant = torch.clamp(torch.round(W * (1.0 / scale)), quant_min, quant_max).to(torch.int8)
    return quant, scale


def dequantize_int8(q, scale):
    zero_point = 0
    return (q.to(torch.int32) - zero_point).to(scale.dtype) * scale


def int8_matmul(qx, sx, qw, sw):
    y = torch.mm(qx.to(torch.int32), qw.to(torch.int32).t())  # safe_int_mm on the CPU
    y = y.to(sx.dtype) * sx  # int_scaled_matmul: the rows' scales
    return y * sw.reshape(1, -1)  # then the weight's per-channel scales
