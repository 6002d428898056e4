"""T5's relative position bias (Raffel et al. 2020): bucketed relative positions, a learned bias per head.

Shape legend:
    ...          any shape (the relative positions given to the bucket function)
    H            number of heads
    T_q          query length: the queries are the LAST T_q of the T_k positions (T_q <= T_k),
                 as in a cached decoding step; T_q == T_k for a whole sequence
    T_k          key length
    num_buckets  rows of the bias table (T5: 32)

No positional embedding is added to the tokens: each head adds a learned scalar to the score of
query i and key j, looked up by the bucket of their relative position (key - query).

relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128)
    relative_position  (...) int64 tensor: key position - query position (HF T5's
                       memory_position - context_position); negative = a key in the past
    returns            (...) int64 tensor of buckets in [0, num_buckets), as HF T5's
                       _relative_position_bucket:
    bidirectional: half the buckets (num_buckets // 2) for relative_position <= 0, the other half
        for relative_position > 0 (these get num_buckets // 2 added); the distance is |relative_position|.
        causal (bidirectional=False): all buckets for the past; a future key (relative_position > 0)
        counts as distance 0; the distance is max(-relative_position, 0).
    Then, with n the buckets of this half (or all of them, causal) and max_exact = n // 2:
        distance < max_exact:  bucket = distance (one bucket per distance)
        otherwise:             bucket = max_exact + int(log(distance / max_exact)
                                                      / log(max_distance / max_exact) * (n - max_exact)),
                               int() truncating, and at most n - 1 (every distance >= max_distance
                               shares the last bucket)
    The log may be taken in float32 (as T5 does) or float64: the checked sizes give the same buckets.

relative_position_bias(weight, T_q, T_k, bidirectional=True, max_distance=128)
    weight   (num_buckets, H) float tensor: the bias table (HF T5's relative_attention_bias.weight,
             an nn.Embedding(num_buckets, H)); num_buckets = weight.size(0)
    returns  (1, H, T_q, T_k), weight's dtype and device:
             bias[0, h, i, j] = weight[bucket(j - i'), h], i' = i + T_k - T_q the query's position,
             bucket = relative_position_bucket(..., bidirectional, num_buckets, max_distance).
    The caller adds it to the attention scores (T5 does not scale its scores; nor does this kata).

Rules: do not modify the inputs; positions you build must be on weight's device.
Off limits: transformers (its T5Attention._relative_position_bucket and compute_bias).
"""

import math

import torch
from torch import Tensor


def relative_position_bucket(relative_position: Tensor, bidirectional: bool = True, num_buckets: int = 32,
                             max_distance: int = 128) -> Tensor:
    raise NotImplementedError("write relative_position_bucket: exact buckets for small distances, log buckets beyond")


def relative_position_bias(weight: Tensor, T_q: int, T_k: int, bidirectional: bool = True,
                           max_distance: int = 128) -> Tensor:
    raise NotImplementedError("write relative_position_bias: bucket key - query, look up weight, (1, H, T_q, T_k)")
