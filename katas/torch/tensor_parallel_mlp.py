"""Megatron's tensor-parallel MLP: column-parallel then row-parallel, simulated over N ranks.

Shape legend:
    B, T   batch and sequence
    D      d_model
    F      d_ff, the MLP's hidden size
    N      world_size, the number of tensor-parallel ranks (F divisible by N)

The MLP y = gelu(x W1ᵀ + b1) W2ᵀ + b2 (weights in nn.Linear's layout: W1 (F, D), W2 (D, F)) is too large for one
device, so Megatron-LM (Shoeybi et al. 2019) splits it over N ranks with ONE all-reduce in the forward pass:

    W1, b1: split by output features (ColumnParallelLinear): rank r holds rows r·F/N .. (r+1)·F/N - 1 of W1
            and the same entries of b1, and computes those hidden units, h_r = gelu(x W1_rᵀ + b1_r); GELU is
            elementwise, so no rank needs another's units.
    W2:     split by input features (RowParallelLinear), the same block: rank r holds columns r·F/N ..
            (r+1)·F/N - 1 of W2 and gives the partial output y_r = h_r W2_rᵀ.
    all-reduce: y = Σ_r y_r, then + b2, added once (each rank holds b2 whole; adding it before the sum would
            add it N times).

The result equals the unsplit MLP's, and so do the gradients. Here the ranks are simulated one after another.

1. mlp_shard(W1, b1, W2, rank, world_size) -> (W1_r (F/N, D), b1_r (F/N,), W2_r (D, F/N)): rank r's shards,
   contiguous blocks in rank order (Megatron's partitioning).
2. tensor_parallel_mlp(x, W1, b1, W2, b2, world_size) -> y (B, T, D): computed through each rank's shards
   (mlp_shard), the partial outputs summed.

Both raise ValueError when F is not divisible by world_size (Megatron's divide() asserts it).

Arguments:
    x           (B, T, D) float
    W1, b1      (F, D), (F,) float: the first linear (d_model -> d_ff)
    W2, b2      (D, F), (D,) float: the second linear (d_ff -> d_model)
    rank        int, 0 <= rank < world_size
    world_size  int N >= 1
returns y of x's dtype, differentiable in x and every weight. The activation is GELU, exact (F.gelu's default).

Rules: do not modify the inputs.
Off limits: megatron, torch.distributed.
"""

import torch
from torch import Tensor


def mlp_shard(W1: Tensor, b1: Tensor, W2: Tensor, rank: int, world_size: int) -> tuple[Tensor, Tensor, Tensor]:
    raise NotImplementedError("write mlp_shard: rank r's block of W1's rows, b1's entries and W2's columns")


def tensor_parallel_mlp(x: Tensor, W1: Tensor, b1: Tensor, W2: Tensor, b2: Tensor, world_size: int) -> Tensor:
    raise NotImplementedError("write tensor_parallel_mlp: per rank gelu(x W1_rᵀ + b1_r) W2_rᵀ, summed, then + b2")
