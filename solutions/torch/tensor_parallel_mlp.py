"""Megatron's tensor-parallel MLP, simulated over N ranks in one process (reference answer).

Shape legend:
    B, T   batch and sequence
    D      d_model
    F      d_ff, the hidden size (divisible by N)
    N      world_size, the number of tensor-parallel ranks

As Megatron-LM's ParallelMLP (Shoeybi et al. 2019, §3): the first linear is a ColumnParallelLinear, W1 (F, D) split
by its output features, so that rank r holds hidden units r·F/N .. (r+1)·F/N - 1 and applies GELU to them without
talking to the others; the second is a RowParallelLinear, W2 (D, F) split by its input features, the same units,
so that each rank gives a partial output; the all-reduce sums them, and the bias b2 is added once, after it.
"""

import torch
import torch.nn.functional as F
from torch import Tensor


def mlp_shard(W1: Tensor, b1: Tensor, W2: Tensor, rank: int, world_size: int) -> tuple[Tensor, Tensor, Tensor]:
    """Rank `rank`'s shards: (W1 rows, b1 entries, W2 columns) of its F/N hidden units, contiguous as Megatron's."""
    if W1.shape[0] % world_size != 0:
        raise ValueError("d_ff is not divisible by world_size")
    # 1) column-parallel W1 and b1: the rank's block of output features; row-parallel W2: the same block of inputs
    W1_shard = torch.chunk(W1, world_size, dim=0)[rank]  # (F, D) -> (F/N, D)
    b1_shard = torch.chunk(b1, world_size, dim=0)[rank]  # (F,) -> (F/N,)
    W2_shard = torch.chunk(W2, world_size, dim=1)[rank]  # (D, F) -> (D, F/N)
    return W1_shard, b1_shard, W2_shard


def tensor_parallel_mlp(x: Tensor, W1: Tensor, b1: Tensor, W2: Tensor, b2: Tensor, world_size: int) -> Tensor:
    """gelu(x W1ᵀ + b1) W2ᵀ + b2, computed as N ranks would: each on its shard, then an all-reduce (a sum)."""
    partials = []
    for rank in range(world_size):
        W1_r, b1_r, W2_r = mlp_shard(W1, b1, W2, rank, world_size)
        # 1) column-parallel linear, then GELU: elementwise, so each rank applies it to its own hidden units
        h = F.gelu(x @ W1_r.T + b1_r)  # (B, T, D) x (D, F/N) -> (B, T, F/N)
        # 2) row-parallel linear: the rank's partial output, no bias yet
        partials.append(h @ W2_r.T)  # (B, T, F/N) x (F/N, D) -> (B, T, D)
    # 3) all-reduce: the sum of the partial outputs over the ranks, then the bias once
    return torch.stack(partials, dim=0).sum(dim=0) + b2  # N x (B, T, D) -> (N, B, T, D) -> (B, T, D)
