"""T5's relative position bias: bucketed relative positions and a learned bias per head (reference answer).

Shape legend:
    ...          any shape (the relative positions given to the bucket function)
    H            number of heads
    T_q          query length: the queries are the LAST T_q of the T_k positions (T_q <= T_k)
    T_k          key length
    num_buckets  rows of the bias table (HF T5: relative_attention_num_buckets = 32)

relative_position = key position - query position (HF T5: memory_position - context_position).
"""

import math

import torch
from torch import Tensor


def relative_position_bucket(relative_position: Tensor, bidirectional: bool = True, num_buckets: int = 32,
                             max_distance: int = 128) -> Tensor:
    """(...) int64 -> (...) int64 bucket in [0, num_buckets): exact for small distances, logarithmic beyond."""
    if bidirectional:
        # 1) half the buckets for keys before the query (and the query itself), half for keys after it
        num_buckets //= 2
        offset = (relative_position > 0).long() * num_buckets  # (...): the upper half for j > i
        distance = relative_position.abs()  # (...)
    else:
        # 1) causal: a future key (relative_position > 0) shares bucket 0 with the query itself
        offset = 0
        distance = (-relative_position).clamp(min=0)  # (...)
    # 2) distances 0 .. max_exact - 1 get a bucket each
    max_exact = num_buckets // 2
    is_small = distance < max_exact
    # 3) max_exact .. max_distance share the other buckets on a log scale; anything farther, the last bucket
    scaled = torch.log(distance.float() / max_exact) / math.log(max_distance / max_exact)  # (...), -inf at 0
    if_large = max_exact + (scaled * (num_buckets - max_exact)).long()  # (...) truncated towards zero
    if_large = if_large.clamp(max=num_buckets - 1)
    return offset + torch.where(is_small, distance, if_large)  # (...)


def relative_position_bias(weight: Tensor, T_q: int, T_k: int, bidirectional: bool = True,
                           max_distance: int = 128) -> Tensor:
    """(num_buckets, H) bias table -> (1, H, T_q, T_k) bias added to the attention scores."""
    num_buckets = weight.size(0)
    # 1) query i sits at absolute position i + T_k - T_q (the last T_q positions), key j at j
    query_pos = torch.arange(T_k - T_q, T_k, device=weight.device)  # (T_q,)
    key_pos = torch.arange(T_k, device=weight.device)  # (T_k,)
    relative = key_pos[None, :] - query_pos[:, None]  # (1, T_k) - (T_q, 1) -> (T_q, T_k)
    # 2) bucket every offset, look its bias up per head
    bucket = relative_position_bucket(relative, bidirectional, num_buckets, max_distance)  # (T_q, T_k)
    values = weight[bucket]  # (T_q, T_k) indexes (num_buckets, H) -> (T_q, T_k, H)
    return values.permute(2, 0, 1).unsqueeze(0)  # (T_q, T_k, H) -> (H, T_q, T_k) -> (1, H, T_q, T_k)
