"""The reference tensor_parallel_mlp equals the unsplit MLP, in its output and its gradients, and Megatron's
partitioning.

Megatron-LM: _initialize_affine_weight_cpu of megatron/core/tensor_parallel/layers.py (NVIDIA/Megatron-LM), re-typed
offline: the master weight split into per_partition_size blocks along partition_dim (0 for ColumnParallelLinear,
1 for RowParallelLinear), rank r keeping weight_list[r::world_size].
"""

import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine
from checker.checks.torch_tensor_parallel_mlp import checks as spec

solution = engine.load_solution(catalogue.find("tensor_parallel_mlp"))


def megatron_partition(master_weight, partition_dim, world_size, rank, stride=1):
    per_partition_size = master_weight.shape[partition_dim] // world_size
    per_partition_per_stride_size = per_partition_size // stride
    weight_list = torch.split(master_weight, per_partition_per_stride_size, dim=partition_dim)
    my_weight_list = weight_list[rank::world_size]
    return torch.cat(my_weight_list, dim=partition_dim)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_shards_are_megatrons_partitions(c):
    _, W1, b1, W2, _, N = spec.inputs(c, "float64")
    for rank in range(N):
        W1_r, b1_r, W2_r = solution.mlp_shard(W1, b1, W2, rank, N)
        assert torch.equal(W1_r, megatron_partition(W1, 0, N, rank))
        assert torch.equal(b1_r, megatron_partition(b1, 0, N, rank))
        assert torch.equal(W2_r, megatron_partition(W2, 1, N, rank))


@pytest.mark.parametrize("c", [*spec.CASES, spec.TIMING], ids=lambda c: c.label)
def test_output_and_gradients_equal_the_unsplit_mlp(c):
    args = [a.clone().requires_grad_(True) if isinstance(a, torch.Tensor) else a for a in spec.inputs(c, "float64")]
    x, W1, b1, W2, b2, N = args
    y = solution.tensor_parallel_mlp(x, W1, b1, W2, b2, N)
    want = F.gelu(x @ W1.T + b1) @ W2.T + b2
    torch.testing.assert_close(y, want, rtol=1e-12, atol=1e-12)
    cot = torch.randn(y.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    got_grads = torch.autograd.grad((y * cot).sum(), [x, W1, b1, W2, b2])
    want_grads = torch.autograd.grad((want * cot).sum(), [x, W1, b1, W2, b2])
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w, rtol=1e-12, atol=1e-12)


def test_the_tanh_convention_is_megatrons_bias_gelu():
    x = torch.linspace(-5, 5, 101, dtype=torch.float64)
    megatron = x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))
    torch.testing.assert_close(F.gelu(x, approximate="tanh"), megatron, rtol=1e-8, atol=1e-9)
    assert (F.gelu(x, approximate="tanh") - F.gelu(x)).abs().max() > 1e-4  # the two GELUs differ: a convention
