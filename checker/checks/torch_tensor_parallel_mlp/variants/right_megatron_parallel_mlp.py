"""Megatron-LM's ParallelMLP (megatron/core/transformer/mlp.py with tensor_parallel/layers.py), simulated: the
weight partitions of ColumnParallelLinear and RowParallelLinear as _initialize_affine_weight_cpu makes them
(torch.split of the master weight by per_partition_size along partition_dim 0 and 1, my_weight_list =
weight_list[rank::world_size]), the local matmuls, reduce_from_tensor_model_parallel_region as a sum, the bias after
it. Adapted: the ranks run in a loop, exact GELU (Megatron's default activation is F.gelu)."""
import torch
import torch.nn.functional as F


def divide(numerator, denominator):
    if numerator % denominator != 0:
        raise ValueError("{} is not divisible by {}".format(numerator, denominator))
    return numerator // denominator


def _partition(master_weight, partition_dim, world_size, rank):
    per_partition_size = divide(master_weight.shape[partition_dim], world_size)
    weight_list = torch.split(master_weight, per_partition_size, dim=partition_dim)
    my_weight_list = weight_list[rank::world_size]
    return torch.cat(my_weight_list, dim=partition_dim)


def mlp_shard(W1, b1, W2, rank, world_size):
    return (_partition(W1, 0, world_size, rank), _partition(b1, 0, world_size, rank),
            _partition(W2, 1, world_size, rank))


def tensor_parallel_mlp(x, W1, b1, W2, b2, world_size):
    outputs = []
    for rank in range(world_size):
        weight1, bias1, weight2 = mlp_shard(W1, b1, W2, rank, world_size)
        intermediate_parallel = F.linear(x, weight1, bias1)  # ColumnParallelLinear, gather_output=False
        intermediate_parallel = F.gelu(intermediate_parallel)
        output_parallel = F.linear(intermediate_parallel, weight2)  # RowParallelLinear, input_is_parallel=True
        outputs.append(output_parallel)
    output_ = outputs[0]
    for o in outputs[1:]:
        output_ = output_ + o  # reduce_from_tensor_model_parallel_region: all-reduce (sum)
    return output_ + b2
