# expect: N-th
"""Every N-th hidden unit goes to a rank (W1[rank::N], b1 and W2 alike): the MLP is still right, but the shards are
not Megatron's contiguous blocks, so a checkpoint written by Megatron's ranks would be loaded into the wrong units."""
import torch
import torch.nn.functional as F


def mlp_shard(W1, b1, W2, rank, world_size):
    if W1.shape[0] % world_size != 0:
        raise ValueError("d_ff is not divisible by world_size")
    n = W1.shape[0] // world_size
    return W1[rank::world_size], b1[rank::world_size], W2[:, rank::world_size]


def tensor_parallel_mlp(x, W1, b1, W2, b2, world_size):
    partials = []
    for rank in range(world_size):
        W1_r, b1_r, W2_r = mlp_shard(W1, b1, W2, rank, world_size)
        h = F.gelu(x @ W1_r.T + b1_r)
        partials.append(h @ W2_r.T)
    return torch.stack(partials).sum(dim=0) + b2
