# expect: reshapes the looked-up table
"""weight[buckets] (T_k, T_k, H) reshaped to (1, H, T_k, T_k) instead of permuted."""
import math

import torch


def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


def relative_position_bias(weight, T_q, T_k, bidirectional=True, max_distance=128):
    device = weight.device
    context_position = torch.arange(T_k, dtype=torch.long, device=device)[:, None]
    memory_position = torch.arange(T_k, dtype=torch.long, device=device)[None, :]
    relative_position = memory_position - context_position
    buckets = relative_position_bucket(relative_position, bidirectional, weight.size(0), max_distance)
    values = torch.nn.functional.embedding(buckets, weight)      # (T_k, T_k, H)
    values = values.reshape(1, values.size(-1), T_k, T_k)                # (1, H, T_k, T_k)
    return values[:, :, -T_q:, :]
