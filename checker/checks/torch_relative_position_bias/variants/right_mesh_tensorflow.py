"""Mesh TensorFlow's _relative_position_bucket (the T5 paper's code), in torch: n = -relative_position,
the upper half for n < 0; the bias by one-hot buckets times the table (einsum)."""
import math

import torch


def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    ret = 0
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        ret += (n < 0).long() * num_buckets
        n = torch.abs(n)
    else:
        n = torch.maximum(n, torch.zeros_like(n))
    # now n is in the range [0, inf)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_if_large = max_exact + (
        torch.log(n.to(torch.float32) / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).long()
    val_if_large = torch.minimum(val_if_large, torch.full_like(val_if_large, num_buckets - 1))
    ret += torch.where(is_small, n, val_if_large)
    return ret


def relative_position_bias(weight, T_q, T_k, bidirectional=True, max_distance=128):
    num_buckets, _ = weight.shape
    q_pos = torch.arange(T_q, device=weight.device) + (T_k - T_q)
    k_pos = torch.arange(T_k, device=weight.device)
    buckets = relative_position_bucket(k_pos.unsqueeze(0) - q_pos.unsqueeze(1), bidirectional, num_buckets,
                                       max_distance)
    one_hot = torch.nn.functional.one_hot(buckets, num_buckets).to(weight.dtype)  # (T_q, T_k, num_buckets)
    return torch.einsum("qkn,nh->hqk", one_hot, weight).unsqueeze(0)
