"""Symmetric absmax int8 quantisation per output channel, and an int8 matmul (LLM.int8()'s vector-wise scheme).

Shape legend:
    N  output channels: the rows of a weight W (nn.Linear's out_features)
    K  input features: the columns of W (in_features)
    T  tokens: the rows of the activations x

Implement the three functions of LLM.int8()'s vector-wise quantisation (Dettmers et al. 2022, §3; bitsandbytes'
int8_vectorwise_quant, int8_vectorwise_dequant and int8_mm_dequant), one scale per ROW:

1. quantize_int8(W) -> (q, scale):

       absmax[n] = max_k |W[n, k]|                 the largest magnitude in row n
       scale[n]  = absmax[n] / 127                 symmetric: 127 stands for +absmax, -127 for -absmax
       q[n, k]   = clamp(round(W[n, k] / scale[n]), -127, 127)   as torch.int8

   round is torch.round, ROUND HALF TO EVEN (2.5 -> 2, 3.5 -> 4), as bitsandbytes' reference code and NumPy
   round; not half up (floor(x + 0.5)) and not a cast, which truncates. -128 is never used (the range stays
   symmetric). A row of zeros has absmax 0: give it scale 1.0 (its q is 0 whatever the scale, and 0 / 0 would be
   NaN); the checks accept any finite positive scale there, and no NaN anywhere.

2. dequantize_int8(q, scale) -> q · scale, broadcast over each row, in scale's dtype.

3. int8_matmul(qx, sx, qw, sw) -> x @ W.T computed from the int8 forms of x (quantised per token: a row of x)
   and W (per output channel): the int8 products summed in INT32 (int8 arithmetic wraps around at 127), then
   multiplied by the scale of the token and the scale of the channel:

       out[t, n] = (Σ_k qx[t, k] · qw[n, k]) · sx[t] · sw[n]

Arguments of quantize_int8:
    W       (N, K) float (float32 or float64); every row may hold any values, zeros too
returns (q, scale):
    q       (N, K) torch.int8, in [-127, 127]
    scale   (N, 1) W's dtype, > 0; W ≈ q * scale

Arguments of dequantize_int8:
    q       (N, K) torch.int8
    scale   (N, 1) float
returns (N, K) in scale's dtype.

Arguments of int8_matmul:
    qx      (T, K) torch.int8: the activations, quantised per row (token)
    sx      (T, 1) float: their scales
    qw      (N, K) torch.int8: the weight, quantised per row (output channel)
    sw      (N, 1) float, sx's dtype: its scales
returns (T, N) in sx's dtype.

Rules: do not modify the inputs.
Off limits: bitsandbytes, torchao.
"""

import torch
from torch import Tensor


def quantize_int8(W: Tensor) -> tuple[Tensor, Tensor]:
    raise NotImplementedError("write quantize_int8: absmax per row, scale = absmax / 127, round, clamp, int8")


def dequantize_int8(q: Tensor, scale: Tensor) -> Tensor:
    raise NotImplementedError("write dequantize_int8: q times its row's scale")


def int8_matmul(qx: Tensor, sx: Tensor, qw: Tensor, sw: Tensor) -> Tensor:
    raise NotImplementedError("write int8_matmul: int8 products summed in int32, then both scales")
