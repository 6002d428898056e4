# followup: [-1, 1]
"""torchao's affine quantisation primitives for asymmetric uint4 with an integer zero point
(torchao/quantization/quant_primitives.py: choose_qparams_affine with MappingType.ASYMMETRIC,
ZeroPointDomain.INT, quant_min=0, quant_max=15, block_size (1, group_size); quantize_affine; dequantize_affine),
re-typed: min_val_neg = min(min, 0), max_val_pos = max(max, 0), scale clamped to eps (a group of zeros gets scale
eps, not GPTQ's [-1, 1]: the follow-up question), zero_point = quant_min - round(min_val_neg / scale). The bytes
follow the contract's order; torchao's own pack_uint4 puts the first value in the HIGH nibble."""
import torch

quant_min, quant_max = 0, 15


def quantize_int4(W, group_size=128):
    N, K = W.shape
    if K % group_size:
        raise ValueError("block_size must divide the input")
    x = W.view(N, K // group_size, group_size)
    min_val_neg = torch.min(x.amin(dim=-1), torch.zeros_like(x[..., 0]))
    max_val_pos = torch.max(x.amax(dim=-1), torch.zeros_like(x[..., 0]))
    scale = (max_val_pos - min_val_neg) / float(quant_max - quant_min)
    scale = torch.clamp(scale, min=torch.finfo(W.dtype).eps)
    zero_point = quant_min - torch.round(min_val_neg / scale)
    zero_point = torch.clamp(zero_point, quant_min, quant_max)
    quant = torch.clamp(torch.round(x * (1.0 / scale.unsqueeze(-1))) + zero_point.unsqueeze(-1), quant_min, quant_max)
    return quant.view(N, K).to(torch.uint8), scale, zero_point


def pack_int4(q):
    if q.shape[-1] % 2 != 0:
        raise ValueError("the last dimension must be even")
    return q[..., 1::2] << 4 | q[..., ::2]


def unpack_int4(packed):
    first, second = packed & 0b1111, packed >> 4
    return torch.stack((first, second), dim=-1).view(*packed.shape[:-1], -1)


def dequantize_int4(q, scale, zero, group_size=128):
    N, K = q.shape
    if K % group_size:
        raise ValueError("block_size must divide the input")
    x = q.view(N, K // group_size, group_size).to(torch.int32) - zero.unsqueeze(-1).to(torch.int32)
    return (x.to(scale.dtype) * scale.unsqueeze(-1)).view(N, K)
