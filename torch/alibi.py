"""ALiBi: attention with linear biases (Press et al., "Train Short, Test Long", 2022).

Shape legend:
    B    batch size
    H    number of heads (num_heads)
    T_q  query length: the queries are the LAST T_q of the T_k positions (T_q <= T_k),
         as in a cached decoding step; T_q == T_k for a whole sequence
    T_k  key (and value) length
    d_k  query/key size per head
    d_v  value size per head

No positional embedding anywhere: each head h adds -m_h * distance to its attention scores.

alibi_slopes(num_heads) -> (H,) torch.float64
    num_heads a power of two: m_h = 2 ** (-8 * (h + 1) / H), h = 0 .. H-1
        (H = 8: 1/2, 1/4, ..., 1/256).
    Otherwise (the authors' get_slopes): let H' be the largest power of two below H. The
    slopes are the H' slopes of H' heads, followed by the first H - H' of the EVEN-indexed
    slopes ([0::2]) of 2H' heads. H = 12: 2^-1, 2^-2, ..., 2^-8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5.

alibi_bias(num_heads, T_q, T_k) -> (H, T_q, T_k) torch.float64
    bias[h, i, j] = -m_h * (i' - j),  where i' = i + (T_k - T_q) is query i's absolute position.
    0 on the query's own position, -m_h per step into the past. For a future key (j > i') the
    value is m_h * (j - i') > 0: masking the future is not this function's business.

alibi_attention(q, k, v) -> out
    q (B, H, T_q, d_k), k (B, H, T_k, d_k), v (B, H, T_k, d_v) float tensors
    out (B, H, T_q, d_v), same dtype as q:
        scores = q k^T / sqrt(d_k) + alibi_bias(H, T_q, T_k)
        causal: query i sees the keys j <= i' (hidden keys at -inf); out = softmax(scores) v

Rules: do not modify the inputs; the bias and the mask must end up on q's device and dtype.
Off limits: torch.nn.functional.scaled_dot_product_attention, torch.nn.MultiheadAttention.
"""

import math

import torch
from torch import Tensor


def alibi_slopes(num_heads: int) -> Tensor:
    raise NotImplementedError("write alibi_slopes: the geometric sequence 2^(-8(h+1)/H), and get_slopes' rule")


def alibi_bias(num_heads: int, T_q: int, T_k: int) -> Tensor:
    raise NotImplementedError("write alibi_bias: -m_h * (i + T_k - T_q - j)")


def alibi_attention(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    raise NotImplementedError("write alibi_attention: causal attention with the ALiBi bias added to the scores")
