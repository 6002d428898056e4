"""Sliding-window attention (Longformer, Mistral).

Shape legend:
    B    batch size
    H    number of heads
    T    sequence length (queries and keys are the same T positions: self-attention)
    d_k  query/key size per head
    d_v  value size per head

Write two functions.

sliding_window_mask(T, window, device=None) -> (T, T) torch.bool tensor on `device`
    True = this query may attend to this key (the catalogue's convention). Query i sees the
    keys j with  i - window < j <= i : itself and the window - 1 keys before it, exactly
    `window` keys (fewer at the start of the sequence). Never a future key.
    window is an int >= 1; window < 1 -> ValueError. window >= T gives the causal mask.

sliding_window_attention(q, k, v, window) -> out
    q (B, H, T, d_k), k (B, H, T, d_k), v (B, H, T, d_v) float tensors
    out (B, H, T, d_v), same dtype as q:
        out = softmax(q k^T / sqrt(d_k), hidden keys at -inf) v   with the mask above
    Every query sees at least itself, so no row is fully hidden.

Rules: do not modify the inputs; tensors you create go on q.device.
Off limits: torch.nn.functional.scaled_dot_product_attention, torch.nn.MultiheadAttention.
"""

import math

import torch
from torch import Tensor


def sliding_window_mask(T: int, window: int, device=None) -> Tensor:
    raise NotImplementedError("write sliding_window_mask: True where i - window < j <= i")


def sliding_window_attention(q: Tensor, k: Tensor, v: Tensor, window: int) -> Tensor:
    raise NotImplementedError("write sliding_window_attention: causal attention over the last `window` keys")
