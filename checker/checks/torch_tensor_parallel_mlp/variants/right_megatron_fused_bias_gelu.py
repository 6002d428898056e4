# followup: tanh approximation was recognised
"""Megatron-LM's MLP with bias_gelu_fusion (megatron/core/fusions/fused_bias_gelu.py): the column-parallel linear
with skip_bias_add, then bias_gelu(bias, y) = x · 0.5 · (1 + tanh(0.79788456 · x · (1 + 0.044715 · x²))), GELU's tanh
approximation; shards by narrow() on the partition dim; the all-reduce as a sum. Adapted: ranks in a loop."""
import torch


def bias_gelu(bias, y):
    x = bias + y
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


def mlp_shard(W1, b1, W2, rank, world_size):
    F_ = W1.shape[0]
    if F_ % world_size:
        raise ValueError(f"{F_} is not divisible by {world_size}")
    n = F_ // world_size
    return W1.narrow(0, rank * n, n), b1.narrow(0, rank * n, n), W2.narrow(1, rank * n, n)


def tensor_parallel_mlp(x, W1, b1, W2, b2, world_size):
    total = None
    for rank in range(world_size):
        w1, bias1, w2 = mlp_shard(W1, b1, W2, rank, world_size)
        h = bias_gelu(bias1, torch.matmul(x, w1.t()))
        partial = torch.matmul(h, w2.t())
        total = partial if total is None else total + partial
    return total + b2
