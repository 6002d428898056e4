"""Scaled dot-product attention.

Shape legend:
    B    batch size
    H    number of heads
    T_q  query length
    T_k  key (and value) length
    d_k  query/key size per head
    d_v  value size per head

Implement ScaledDotProductAttention.forward:

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V

Arguments:
    Q     (B, H, T_q, d_k) float tensor
    K     (B, H, T_k, d_k) float tensor
    V     (B, H, T_k, d_v) float tensor
    mask  None, or a bool tensor broadcastable to (B, H, T_q, T_k), for example
          (B, 1, 1, T_k) for padding or (1, 1, T_q, T_k) for a causal mask.
          True = this query may attend to this key; False = hidden.
Returns (output, weights):
    output   (B, H, T_q, d_v), same dtype as Q
    weights  (B, H, T_q, T_k), same dtype as Q; each row sums to 1 over the visible keys,
             hidden keys get exactly 0.
A query with no visible key at all gets all-zero weights and an all-zero output.

Rules: work in the dtype and on the device of the inputs; do not modify the inputs;
apply self.dropout to the weights (the checker runs with dropout=0.0).
Off limits: torch.nn.functional.scaled_dot_product_attention, torch.nn.MultiheadAttention.
"""

import math

import torch
from torch import Tensor, nn


class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        raise NotImplementedError("write the body of ScaledDotProductAttention.forward")
