"""Multi-head attention: self-attention and cross-attention.

Shape legend:
    B    batch size
    T_q  query length (the sequence that asks)
    T_k  key/value length (the sequence that is read; T_k == T_q in self-attention)
    D    d_model, the model width
    H    num_heads
    d_k  D // H, the size of one head

Implement MultiHeadAttention:

    MultiHead(x_q, x_kv) = Concat(head_1, ..., head_H) W_o
    head_h = softmax(Q_h K_hᵀ / sqrt(d_k)) V_h,  Q = x_q W_q,  K = x_kv W_k,  V = x_kv W_v

__init__(d_model, num_heads, dropout=0.0) must create these submodules; the checker loads its
weights into them by name, so spell them exactly:
    W_q, W_k, W_v, W_o   each nn.Linear(d_model, d_model) with bias
    dropout              nn.Dropout(dropout), applied to the attention weights (the checker uses 0.0)

forward(x_q, x_kv, mask=None) arguments:
    x_q   (B, T_q, D) float tensor: the queries come from here
    x_kv  (B, T_k, D) float tensor: the keys and values come from here.
          Self-attention: the caller passes the same tensor twice, mha(x, x, mask).
          Cross-attention: x_q is the decoder state and x_kv the encoder memory.
    mask  None, or a bool tensor broadcastable to (B, H, T_q, T_k), for example
          (B, 1, 1, T_k) for padding, (1, 1, T_q, T_k) causal, (B, 1, T_q, T_k) decoder.
          True = this query may attend to this key; False = hidden.
Returns (out, attn):
    out   (B, T_q, D), same dtype as x_q
    attn  (B, H, T_q, T_k), the attention weights of every head (not averaged);
          hidden keys get exactly 0. A query with no visible key gets all-zero weights.

The file must be self-contained: write the attention inside (the _attention helper below,
or paste your ScaledDotProductAttention class from the attention kata into this file).
The checker only calls __init__ and forward; the helpers are there to organise your code.
Rules: work in the dtype and on the device of the inputs; do not modify the inputs.
Off limits: torch.nn.functional.scaled_dot_product_attention, torch.nn.MultiheadAttention,
torch.nn.functional.multi_head_attention_forward.
"""

import math

import torch
from torch import Tensor, nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0):
        super().__init__()
        raise NotImplementedError("create self.W_q, self.W_k, self.W_v, self.W_o (nn.Linear(d_model, d_model)) "
                                  "and self.dropout; check that num_heads divides d_model")

    def _split_heads(self, x: Tensor) -> Tensor:
        """(B, T, D) -> (B, H, T, d_k)"""
        raise NotImplementedError("write _split_heads: (B, T, D) -> (B, H, T, d_k)")

    def _combine_heads(self, x: Tensor) -> Tensor:
        """(B, H, T, d_k) -> (B, T, D)"""
        raise NotImplementedError("write _combine_heads: (B, H, T, d_k) -> (B, T, D)")

    def _attention(self, Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None) -> tuple[Tensor, Tensor]:
        """Q (B, H, T_q, d_k), K and V (B, H, T_k, d_k) -> (out (B, H, T_q, d_k), weights (B, H, T_q, T_k))"""
        raise NotImplementedError("write _attention: scaled dot-product attention with the mask")

    def forward(self, x_q: Tensor, x_kv: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        raise NotImplementedError("write MultiHeadAttention.forward")
