# expect: W2
"""W2 split by its rows (output features), like W1: a row-parallel layer splits its INPUT features, the columns of
nn.Linear's (out, in) weight, so that they match the hidden units the rank holds."""
import torch
import torch.nn.functional as F


def mlp_shard(W1, b1, W2, rank, world_size):
    if W1.shape[0] % world_size != 0:
        raise ValueError("d_ff is not divisible by world_size")
    n = W1.shape[0] // world_size
    return W1[rank * n:(rank + 1) * n], b1[rank * n:(rank + 1) * n], W2[rank * W2.shape[0] // world_size:(rank + 1) * W2.shape[0] // world_size]


def tensor_parallel_mlp(x, W1, b1, W2, b2, world_size):
    partials = []
    for rank in range(world_size):
        W1_r, b1_r, W2_r = mlp_shard(W1, b1, W2, rank, world_size)
        h = F.gelu(x @ W1_r.T + b1_r)
        partials.append(h @ W2_r.T)
    return torch.stack(partials).sum(dim=0) + b2
