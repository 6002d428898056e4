"""Grouped-query attention (GQA), with multi-query attention (MQA) and MHA as its two ends.

Shape legend:
    B     batch size
    T     sequence length (self-attention: queries, keys and values come from the same x)
    D     d_model, the model width
    H     num_heads, the number of QUERY heads
    H_kv  num_kv_heads, the number of key/value heads (H_kv divides H)
    G     H // H_kv, the group size: how many query heads share one key/value head
    d_k   D // H, the size of one head (query, key and value heads all have d_k)

Implement GroupedQueryAttention (Ainslie et al. 2023, "GQA"; used by LLaMA 2 70B, Mistral):

    Q = x W_q  split into H heads,    K = x W_k and V = x W_v  split into H_kv heads
    head_h = softmax(Q_h K_gᵀ / sqrt(d_k)) V_g   with g = h // G
    out = Concat(head_1, ..., head_H) W_o

Query head h reads key/value head h // G: query heads 0..G-1 share kv head 0, heads G..2G-1
share kv head 1, and so on (LLaMA's repeat_kv, i.e. Tensor.repeat_interleave on the head axis).
H_kv == H is ordinary multi-head attention; H_kv == 1 is multi-query attention (Shazeer 2019).

__init__(d_model, num_heads, num_kv_heads, dropout=0.0)
    raise ValueError if num_heads does not divide d_model, or num_kv_heads does not divide num_heads.
    It must create these submodules; the checker loads its weights into them by name:
        W_q   nn.Linear(d_model, d_model)               with bias
        W_k   nn.Linear(d_model, num_kv_heads * d_k)    with bias
        W_v   nn.Linear(d_model, num_kv_heads * d_k)    with bias
        W_o   nn.Linear(d_model, d_model)               with bias
        dropout  nn.Dropout(dropout), applied to the attention weights (the checker uses 0.0)

forward(x, mask=None) arguments:
    x     (B, T, D) float tensor
    mask  None, or a bool tensor broadcastable to (B, H, T, T), e.g. (1, 1, T, T) causal,
          (B, 1, 1, T) padding, (B, 1, T, T) decoder, (B, H, T, T) one mask per query head.
          True = this query may attend to this key; False = hidden.
Returns (out, attn):
    out   (B, T, D), same dtype as x
    attn  (B, H, T, T), the attention weights of every QUERY head (not averaged);
          hidden keys get exactly 0. A query with no visible key gets all-zero weights.

Rules: work in the dtype and on the device of the inputs; do not modify the inputs.
Off limits: torch.nn.functional.scaled_dot_product_attention, torch.nn.MultiheadAttention,
torch.nn.functional.multi_head_attention_forward.
"""

import math

import torch
from torch import Tensor, nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int, dropout: float = 0.0):
        super().__init__()
        raise NotImplementedError("check the sizes (ValueError), then create self.W_q, self.W_k, self.W_v, "
                                  "self.W_o and self.dropout")

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        raise NotImplementedError("write GroupedQueryAttention.forward: project, share each kv head with its "
                                  "group of query heads, attend, combine")
