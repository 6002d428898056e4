# expect: use |relative_position|
"""Causal buckets from the absolute distance: future keys get the buckets of past ones."""
import math

import torch


def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    ret = torch.zeros_like(relative_position)
    n = relative_position
    if bidirectional:
        num_buckets //= 2
        ret = ret + (n > 0).long() * num_buckets
        n = n.abs()
    else:
        n = n.abs()
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_if_large = max_exact + (
        torch.log(n.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).long()
    val_if_large = torch.clamp(val_if_large, max=num_buckets - 1)
    return ret + torch.where(is_small, n, val_if_large)


def relative_position_bias(weight, T_q, T_k, bidirectional=True, max_distance=128):
    context = torch.arange(T_k - T_q, T_k, device=weight.device)[:, None]
    memory = torch.arange(T_k, device=weight.device)[None, :]
    buckets = relative_position_bucket(memory - context, bidirectional, weight.shape[0], max_distance)
    return weight[buckets].permute(2, 0, 1).unsqueeze(0)
