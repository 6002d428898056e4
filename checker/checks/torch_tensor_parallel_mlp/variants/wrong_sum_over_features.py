# expect: dim
"""The all-reduce sums over the wrong axis of the stacked partial outputs (dim=1, the batch) instead of the rank
axis."""
import torch
import torch.nn.functional as F


def mlp_shard(W1, b1, W2, rank, world_size):
    if W1.shape[0] % world_size != 0:
        raise ValueError("d_ff is not divisible by world_size")
    n = W1.shape[0] // world_size
    return W1[rank * n:(rank + 1) * n], b1[rank * n:(rank + 1) * n], W2[:, rank * n:(rank + 1) * n]


def tensor_parallel_mlp(x, W1, b1, W2, b2, world_size):
    partials = []
    for rank in range(world_size):
        W1_r, b1_r, W2_r = mlp_shard(W1, b1, W2, rank, world_size)
        h = F.gelu(x @ W1_r.T + b1_r)
        partials.append(h @ W2_r.T)
    return torch.stack(partials).sum(dim=1) + b2
