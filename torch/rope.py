"""Rotary position embedding (RoPE), as in RoFormer and LLaMA.

Shape legend:
    B    batch size
    H    number of heads
    T    number of positions in x
    d_k  size of one head's query/key vector (even)

Write apply_rope(x, positions, layout="half", base=10000.0):

    x          (B, H, T, d_k) float tensor: queries or keys, already split into heads
    positions  (T,) int64 tensor: the ABSOLUTE position of each of the T rows of x. They may
               start anywhere (7, 8, 9, 10, 11 for a decode step after 7 cached tokens) and
               need not be consecutive.
    layout     which coordinates form a pair (see below); anything else -> ValueError
    base       the frequency base (10000.0 in RoFormer and LLaMA)
Returns the rotated x: (B, H, T, d_k), same dtype and device as x.

The d_k coordinates form d_k / 2 pairs. Pair i (i = 0 .. d_k/2 - 1) of the row at position p
is rotated by the angle  p * theta_i,  theta_i = base ** (-2i / d_k):

    (a, b) -> (a cos(p theta_i) - b sin(p theta_i),  a sin(p theta_i) + b cos(p theta_i))

    layout="half"         pair i is (x[..., i], x[..., i + d_k/2])   (GPT-NeoX, HF LLaMA rotate_half)
    layout="interleaved"  pair i is (x[..., 2i], x[..., 2i + 1])     (RoFormer, Meta's LLaMA, complex numbers)

The same function is applied to the queries and to the keys; then the score of a query at
position m with a key at position n depends only on m - n.

Rules: do not modify x; tensors you create go on x.device.
"""

import torch
from torch import Tensor


def apply_rope(x: Tensor, positions: Tensor, layout: str = "half", base: float = 10000.0) -> Tensor:
    raise NotImplementedError("write apply_rope: rotate each pair of x by positions * base^(-2i/d_k)")
