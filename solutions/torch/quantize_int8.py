"""Symmetric absmax int8 quantisation per output channel, and an int8 matmul (reference answer).

Shape legend:
    N  output channels: rows of a weight W (nn.Linear's out_features)
    K  input features: columns of W (in_features)
    T  tokens: rows of the activations x

As LLM.int8()'s vector-wise quantisation (Dettmers et al. 2022; bitsandbytes' int8_vectorwise_quant):
scale = absmax(row) / 127, q = round(W / scale), and the int8 product summed in int32, then times both scales.
"""

import torch
from torch import Tensor

Q_MAX = 127  # the symmetric int8 range [-127, 127]: |W / scale| <= 127 already, the clamp only guards it


def quantize_int8(W: Tensor) -> tuple[Tensor, Tensor]:
    """q (N, K) int8 and scale (N, 1) in W's dtype, with W ≈ q * scale."""
    # 1) the absolute maximum of each row: the value that 127 stands for
    absmax = W.abs().amax(dim=1, keepdim=True)  # (N, K) -> (N, 1)
    # 2) the step between two levels; a row of zeros gets scale 1 (0 / 0 would be NaN)
    scale = torch.where(absmax > 0, absmax / 127, torch.ones_like(absmax))  # (N, 1)
    # 3) round half to even (torch.round), keep the symmetric range, store as int8
    q = torch.round(W / scale).clamp(-Q_MAX, Q_MAX).to(torch.int8)  # (N, K)
    return q, scale


def dequantize_int8(q: Tensor, scale: Tensor) -> Tensor:
    """Back to real units: q * scale, in scale's dtype."""
    return q * scale  # (N, K) int8 * (N, 1) float -> (N, K) float


def int8_matmul(qx: Tensor, sx: Tensor, qw: Tensor, sw: Tensor) -> Tensor:
    """x @ W.T from their int8 forms: int8 products summed in int32, then rescaled by both scales."""
    # 4) sum the products in int32: one product alone reaches 127 * 127 = 16129, past int8 and near int16's limit
    acc = qx.to(torch.int32) @ qw.to(torch.int32).T  # (T, K) @ (K, N) -> (T, N) int32
    # 5) each output x_t · W_n is acc[t, n] times the scale of token t and the scale of channel n
    return acc * (sx * sw.T)  # (T, N) * ((T, 1) * (1, N)) -> (T, N) float
