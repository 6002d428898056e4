"""Flash attention: attention computed tile by tile with an online softmax (FlashAttention, Dao et al. 2022).

Shape legend:
    B           batch size
    H           number of heads
    T_q         query length
    T_k         key (and value) length
    d_k         query/key size per head
    d_v         value size per head
    block_size  number of keys in one tile (the last tile is shorter when block_size does not divide T_k)

Implement flash_attention(q, k, v, causal=False, block_size=16):

    out = softmax(q kᵀ / √d_k) v        (the same result as ordinary attention)

computed without ever holding the (T_q, T_k) score matrix: walk over the keys in tiles of
block_size, keep per query a running max m, a running sum l of exp(score - m) and an
accumulator acc of exp(score - m) · v; when a tile raises the max, rescale l AND acc by
exp(m_old - m_new); divide acc by l once, at the end.

Arguments:
    q           (B, H, T_q, d_k) float tensor
    k           (B, H, T_k, d_k) float tensor
    v           (B, H, T_k, d_v) float tensor
    causal      bool. True: query i may attend to key j only if j <= i + (T_k - T_q), i.e. the
                queries are the LAST T_q positions of the sequence (bottom-right aligned, as in a
                cached decoding step). False: every query sees every key.
    block_size  int >= 1, keys per tile. Any value must give the same result (up to rounding),
                including one that does not divide T_k or is larger than T_k.
Returns:
    out         (B, H, T_q, d_v), same dtype and device as q.
A query with no visible key (causal with T_q > T_k) gets an all-zero output, never NaN.

Memory contract (checked while your code runs): no tensor your code creates may have more than
    B · H · max(T_q, T_k) · max(block_size, d_k, d_v)
elements. So no (T_q, T_k) score matrix and no (T_q, T_k) mask, not even for one head: build
the causal mask of a tile from positions. A (B, H, T_q, block_size) tile of scores is fine.
And the softmax is online: no float tensor holds scores (or weights) for all T_k keys at once,
not even one query's row; splitting only the queries into tiles with a full softmax per row is
memory-efficient attention, not flash attention, and is rejected.

Rules: work in the dtype and on the device of the inputs; do not modify the inputs; gradients
must flow back to q, k and v (plain autograd through your loop is fine).
Off limits: torch.nn.functional.scaled_dot_product_attention, torch.nn.MultiheadAttention, numpy.
"""

import math

import torch
from torch import Tensor


def flash_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False, block_size: int = 16) -> Tensor:
    raise NotImplementedError("write the body of flash_attention")
