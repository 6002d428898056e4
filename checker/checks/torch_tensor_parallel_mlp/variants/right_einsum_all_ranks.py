"""All ranks at once: the shards stacked on a leading rank axis (W1 viewed (N, F/N, D), W2 (D, N, F/N) permuted to
(N, D, F/N)), one batched einsum per linear, and the all-reduce as a sum over the rank axis."""
import torch
import torch.nn.functional as F


def mlp_shard(W1, b1, W2, rank, world_size):
    Fdim, D = W1.shape
    if Fdim % world_size != 0:
        raise ValueError("d_ff must be divisible by world_size")
    n = Fdim // world_size
    return W1.view(world_size, n, D)[rank], b1.view(world_size, n)[rank], W2.view(-1, world_size, n)[:, rank]


def tensor_parallel_mlp(x, W1, b1, W2, b2, world_size):
    Fdim, D = W1.shape
    if Fdim % world_size != 0:
        raise ValueError("d_ff must be divisible by world_size")
    n = Fdim // world_size
    W1s = W1.reshape(world_size, n, D)  # (N, F/N, D)
    b1s = b1.reshape(world_size, 1, 1, n)  # (N, 1, 1, F/N)
    W2s = W2.reshape(D, world_size, n).permute(1, 0, 2)  # (N, D, F/N)
    h = F.gelu(torch.einsum("btd,rfd->rbtf", x, W1s) + b1s)  # (N, B, T, F/N)
    partial = torch.einsum("rbtf,rdf->rbtd", h, W2s)  # (N, B, T, D)
    return partial.sum(dim=0) + b2
