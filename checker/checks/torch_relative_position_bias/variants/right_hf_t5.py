"""Hugging Face's T5Attention._relative_position_bucket and compute_bias, names adapted: float32 log,
torch.min/full_like, and the bias of the whole sequence sliced to the last T_q rows, as HF does when
decoding with a cache."""
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
    # now relative_position is in the range [0, inf)

    # half of the buckets are for exact increments in positions
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact

    # The other half of the buckets are for logarithmically bigger bins in positions up to max_distance
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
    context_position = torch.arange(T_k, dtype=torch.long, device=weight.device)[:, None]
    memory_position = torch.arange(T_k, dtype=torch.long, device=weight.device)[None, :]
    relative_position = memory_position - context_position  # shape (key_length, key_length)
    relative_position_bucket_ = relative_position_bucket(
        relative_position, bidirectional=bidirectional, num_buckets=weight.shape[0], max_distance=max_distance)
    values = torch.nn.functional.embedding(relative_position_bucket_, weight)  # (key_length, key_length, H)
    values = values.permute([2, 0, 1]).unsqueeze(0)  # shape (1, num_heads, key_length, key_length)
    return values[:, :, -T_q:, :]
