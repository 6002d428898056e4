"""Asymmetric group-wise int4 quantisation (GPTQ's quantizer per group of columns), packed two levels to a byte.

Shape legend:
    N           output channels: the rows of a weight W
    K           input features: the columns of W (even, to pack)
    group_size  columns that share one scale and one zero point; it must divide K
    G           = K // group_size groups per row

Implement GPTQ's asymmetric 4-bit quantizer (Frantar et al. 2023; gptq/quant.py, Quantizer.find_params with
sym=False and maxq = 15, and quantize), applied to every group of group_size consecutive columns of a row, as
AutoGPTQ's group_size does, and AutoGPTQ's packing:

1. quantize_int4(W, group_size=128) -> (q, scale, zero). For each row n and group g (columns g·group_size ..
   (g + 1)·group_size - 1):

       xmin = min(min(group), 0)       xmax = max(max(group), 0)     the range, stretched to hold 0
       where xmin = xmax = 0 (a group of zeros): xmin = -1, xmax = 1, as GPTQ does
       scale = (xmax - xmin) / 15                                   16 levels, 15 steps
       zero  = round(-xmin / scale), clamped to [0, 15]             the level that stands for 0
       q     = clamp(round(W / scale) + zero, 0, 15)                as torch.uint8

   round is torch.round, ROUND HALF TO EVEN (2.5 -> 2, 3.5 -> 4); zero is a whole number kept in W's dtype.
   Since the range holds 0, zero lies in [0, 15] before any clamp. Reading the range as the group's own
   [min, max] (AWQ's pseudo_quantize_tensor, which then clamps zero) is accepted as a variant.
   If group_size does not divide K: raise ValueError.

2. pack_int4(q) -> (N, K // 2) uint8: byte j of a row holds column 2j in its LOW nibble (bits 0-3) and column
   2j + 1 in its HIGH nibble (bits 4-7), the first value in the lowest bits as AutoGPTQ packs its qweight:
   byte = q[:, 2j] + 16 · q[:, 2j + 1]. If K is odd: raise ValueError.

3. unpack_int4(packed) -> (N, K) uint8: the inverse of pack_int4, columns back in their order.

4. dequantize_int4(q, scale, zero, group_size=128) -> (q - zero) · scale with each column's group's scale and
   zero point, in scale's dtype. If group_size does not divide K: raise ValueError.

Arguments of quantize_int4:
    W           (N, K) float (float32 or float64)
    group_size  int, divides K; default 128
returns (q, scale, zero):
    q           (N, K) torch.uint8, in [0, 15]
    scale       (N, G) W's dtype, > 0
    zero        (N, G) W's dtype, whole numbers in [0, 15]

Arguments of pack_int4:      q (N, K) torch.uint8 in [0, 15]       returns (N, K // 2) torch.uint8
Arguments of unpack_int4:    packed (N, K // 2) torch.uint8        returns (N, K) torch.uint8
Arguments of dequantize_int4:
    q (N, K) torch.uint8;  scale, zero (N, G) float, the same dtype;  group_size int
returns (N, K) in scale's dtype.

Rules: do not modify the inputs.
Off limits: auto_gptq, gptqmodel, awq, torchao, bitsandbytes.
"""

import torch
from torch import Tensor


def quantize_int4(W: Tensor, group_size: int = 128) -> tuple[Tensor, Tensor, Tensor]:
    raise NotImplementedError("write quantize_int4: each group's range with 0 in it, scale, zero point, levels")


def pack_int4(q: Tensor) -> Tensor:
    raise NotImplementedError("write pack_int4: column 2j in the low nibble, column 2j + 1 in the high nibble")


def unpack_int4(packed: Tensor) -> Tensor:
    raise NotImplementedError("write unpack_int4: the two nibbles of every byte, back in column order")


def dequantize_int4(q: Tensor, scale: Tensor, zero: Tensor, group_size: int = 128) -> Tensor:
    raise NotImplementedError("write dequantize_int4: (q - zero) * scale, group by group")
