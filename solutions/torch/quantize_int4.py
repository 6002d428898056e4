"""Asymmetric group-wise int4 quantisation, packed two levels to a byte (reference answer).

Shape legend:
    N           output channels: rows of a weight W
    K           input features: columns of W (even)
    group_size  columns that share one scale and one zero point; it divides K
    G           = K // group_size groups per row

As GPTQ's quantizer (Frantar et al. 2023; gptq/quant.py, Quantizer.find_params and quantize, asymmetric, maxq = 15)
applied to each group of group_size columns, as AutoGPTQ does with its group_size: the range [min, max] of the group
stretched to hold 0, scale = (max - min) / 15, zero = round(-min / scale), q = clamp(round(W / scale) + zero, 0, 15);
packed as AutoGPTQ packs its qweight, the first column in the lowest bits.
"""

import torch
from torch import Tensor

Q_MIN, Q_MAX = 0, 15  # the 16 levels of an unsigned 4-bit number


def quantize_int4(W: Tensor, group_size: int = 128) -> tuple[Tensor, Tensor, Tensor]:
    """q (N, K) uint8 in [0, 15], scale (N, G) and zero (N, G) in W's dtype; W ≈ (q - zero) * scale per group."""
    N, K = W.shape
    if K % group_size != 0:
        raise ValueError(f"group_size {group_size} does not divide the {K} columns of W")
    groups = W.reshape(N, K // group_size, group_size)  # (N, K) -> (N, G, group_size)
    # 1) each group's range, stretched to hold 0 (GPTQ): then 0 is exactly one of the levels
    xmin = groups.amin(dim=2).clamp(max=0)  # (N, G)
    xmax = groups.amax(dim=2).clamp(min=0)  # (N, G)
    # 2) a group of zeros gets GPTQ's range [-1, 1], so that its scale is not 0
    empty = (xmin == 0) & (xmax == 0)  # (N, G)
    xmin = torch.where(empty, -1.0, xmin)  # (N, G)
    xmax = torch.where(empty, 1.0, xmax)  # (N, G)
    # 3) 15 steps from min to max; the zero point is the level that stands for 0
    scale = (xmax - xmin) / 15  # (N, G)
    zero = torch.round(-xmin / scale).clamp(Q_MIN, Q_MAX)  # (N, G), in [0, 15] already
    # 4) each weight's level: round half to even, shift by the zero point, clamp to 4 bits
    q = (torch.round(groups / scale[:, :, None]) + zero[:, :, None]).clamp(Q_MIN, Q_MAX)  # (N, G, group_size)
    return q.reshape(N, K).to(torch.uint8), scale, zero


def pack_int4(q: Tensor) -> Tensor:
    """(N, K) levels in [0, 15] -> (N, K / 2) bytes: column 2j in the low nibble, column 2j + 1 in the high one."""
    N, K = q.shape
    if K % 2 == 1:
        raise ValueError(f"an odd number of columns ({K}) cannot be packed two to a byte")
    # 5) two levels per byte, the even column in the low 4 bits (AutoGPTQ's order: the first value lowest)
    low = q[:, 0::2]  # (N, K / 2)
    high = q[:, 1::2]  # (N, K / 2)
    return low | (high << 4)  # (N, K / 2) uint8


def unpack_int4(packed: Tensor) -> Tensor:
    """(N, K / 2) bytes -> (N, K) levels, the inverse of pack_int4."""
    N, half = packed.shape
    # 6) the high nibble is the byte // 16
    high = packed // 16  # (N, K / 2)
    # 7) the low nibble is what is left; back to column order: low, high, low, high, ...
    pairs = torch.stack((packed - high * 16, high), dim=2)  # (N, K / 2, 2)
    return pairs.reshape(N, 2 * half)  # (N, K) uint8


def dequantize_int4(q: Tensor, scale: Tensor, zero: Tensor, group_size: int = 128) -> Tensor:
    """(q - zero) * scale, group by group, in scale's dtype."""
    N, K = q.shape
    if K % group_size != 0:
        raise ValueError(f"group_size {group_size} does not divide the {K} columns of q")
    groups = q.reshape(N, K // group_size, group_size)  # (N, K) -> (N, G, group_size)
    # 8) back to real units: the level minus the zero point, times the step
    W = (groups - zero[:, :, None]) * scale[:, :, None]  # (N, G, group_size)
    return W.reshape(N, K)  # (N, K)
