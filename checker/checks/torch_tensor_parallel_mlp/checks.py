"""Hidden checks: Megatron's tensor-parallel MLP (column-parallel W1, row-parallel W2) over N simulated ranks.

Every dimension its own size and world sizes 1, 2, 3 and 4 (F divisible by each). The weights are spread so that
GELU's curvature matters (pre-activations of a few units, both signs): GELU of a partial sum differs from the sum of
GELUs, and a bias added on every rank moves the output by (N - 1)·b2.
"""

import torch
import torch.nn.functional as F

from checker.kit import Convention, Fail, Mistake, case, check, compare, expect_raises, \
    expect_structure
from checker.lang import t

TARGET = "tensor_parallel_mlp"
OUTPUTS = [("y", "(B, T, D)")]
BATCH_INDEPENDENT = True

CASES = [
    case(1, B=2, T=3, D=5, F=8, N=2),
    case(2, B=3, T=2, D=4, F=9, N=3),
    case(3, B=2, T=4, D=6, F=12, N=4),
    case(4, B=1, T=5, D=3, F=7, N=1),
]
TIMING = case(5, B=4, T=64, D=128, F=512, N=8)


def inputs(c, dtype):
    g = c.generator()
    d = getattr(torch, dtype)

    def randn(*shape, scale=1.0):
        return (scale * torch.randn(*shape, generator=g, dtype=torch.float64)).to(d)

    x = randn(c.B, c.T, c.D)
    W1, b1 = randn(c.F, c.D, scale=c.D ** -0.5 * 1.5), randn(c.F, scale=0.5)
    W2, b2 = randn(c.D, c.F, scale=c.F ** -0.5), randn(c.D, scale=0.5)
    return x, W1, b1, W2, b2, c.N


# ----------------------------------------------------------------------------- an accepted convention


def _tanh_gelu(x, W1, b1, W2, b2, world_size):
    """The reference with Megatron's fused bias_gelu: GELU's tanh approximation."""
    if W1.shape[0] % world_size != 0:
        raise ValueError("d_ff is not divisible by world_size")
    return F.gelu(x @ W1.T + b1, approximate="tanh") @ W2.T + b2


# Megatron's bias_gelu writes √(2/π) as 0.79788456 (1e-10 short): its outputs differ from the exact tanh form by
# ~1e-9, held to 1e-8 (every named mistake is far outside it).
_TANH_CONSTANT = (1e-8, 1e-9)

CONVENTIONS = (Convention(
    "GELU's tanh approximation",
    "GELU's tanh approximation was recognised, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), as Megatron-LM's fused "
    "bias_gelu computes it (and GPT-2's gelu_new): the contract's GELU is the exact one, F.gelu's default, "
    "x·Φ(x); the two differ by up to about 3e-4", impl=_tanh_gelu, tol=_TANH_CONSTANT),)


# ----------------------------------------------------------------------------- named mistakes
# Two the error model cannot express: it moves no term into a loop (b2 into each rank's partial output), and it
# turns no torch.chunk into a strided slice.


def _shards(W1, b1, W2, world_size, strided=False):
    if strided:
        return [(W1[r::world_size], b1[r::world_size], W2[:, r::world_size]) for r in range(world_size)]
    return list(zip(torch.chunk(W1, world_size, 0), torch.chunk(b1, world_size, 0), torch.chunk(W2, world_size, 1)))


def _bias_on_every_rank(x, W1, b1, W2, b2, world_size):
    return sum(F.gelu(x @ W1_r.T + b1_r) @ W2_r.T + b2 for W1_r, b1_r, W2_r in _shards(W1, b1, W2, world_size))


def _strided_shard(W1, b1, W2, rank, world_size):
    return _shards(W1, b1, W2, world_size, strided=True)[rank]


MISTAKES = [
    Mistake("b2 added on every rank", _bias_on_every_rank,
            "your output adds b2 to every rank's partial output before the all-reduce, so the sum holds N·b2: "
            "Megatron's RowParallelLinear adds its bias once, after the all-reduce (every rank holds b2 whole), "
            "y = Σ_r h_r W2_rᵀ + b2"),
    Mistake("strided shards", _strided_shard,
            "your shards take every N-th hidden unit (W1[rank::N]): Megatron partitions contiguously, rank r holds "
            "rows r·F/N .. (r+1)·F/N - 1 (torch.chunk(W1, N, dim=0)[r]), so that a checkpoint's shards are slices "
            "of the full weight; a strided split gives the same MLP only if W1, b1 and W2 are all strided alike"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "mlp_shard(W1, b1, W2, rank, world_size) and tensor_parallel_mlp(x, W1, b1, W2, b2, world_size) "
                    "are functions")
def structure(kit):
    expect_structure(kit, "mlp_shard", module=False, params=["W1", "b1", "W2", "rank", "world_size"])
    expect_structure(kit, TARGET, module=False, params=["x", "W1", "b1", "W2", "b2", "world_size"])


_SHARD_OUTPUTS = [("W1_shard", "(F/N, D)"), ("b1_shard", "(F/N,)"), ("W2_shard", "(D, F/N)")]


@check("numerics", "mlp_shard: rank r holds the r-th contiguous block of W1's rows, b1's entries and W2's columns")
def shards(kit):
    for c in CASES:
        _, W1, b1, W2, _, N = kit.inputs(c)
        for rank in range(N):
            args = (W1, b1, W2, rank, N)
            got = kit.user(args, target="mlp_shard")
            want = kit.reference(args, target="mlp_shard")
            try:
                if not isinstance(got, (tuple, list)) or len(got) != 3:
                    raise Fail(t("should return a tuple ({names}), got {got}", names="W1_shard, b1_shard, W2_shard",
                                 got=type(got).__name__))
                for (name, legend), u, e in zip(_SHARD_OUTPUTS, got, want):
                    compare(u, e, name, legend)
            except Fail as fail:
                found = None
                if isinstance(got, (tuple, list)) and all(isinstance(x, torch.Tensor) for x in got):
                    found = kit.name_mistake(args, tuple(got), target="mlp_shard", outputs=_SHARD_OUTPUTS)
                raise Fail(t("{label}, rank {rank} of {N}: {fail}", label=c.label, rank=rank, N=N, fail=fail.message),
                           found or fail.diagnosis) from None


@check("properties", "mlp_shard and tensor_parallel_mlp raise ValueError when d_ff is not divisible by world_size")
def not_divisible(kit):
    c = CASES[0]  # F = 8
    x, W1, b1, W2, b2, _ = kit.inputs(c)
    expect_raises([("mlp_shard(W1, b1, W2, 0, 3)", lambda: kit.user((W1, b1, W2, 0, 3), target="mlp_shard"),
                    "mlp_shard"),
                   ("tensor_parallel_mlp(x, W1, b1, W2, b2, 3)", lambda: kit.user((x, W1, b1, W2, b2, 3)),
                    "tensor_parallel_mlp")],
                  t("d_ff = 8 on 3 ranks: torch.chunk would give unequal shards (3, 3, 2), which Megatron's ranks, each "
                    "allocating F/N units, cannot hold"))


@check("properties", "for every world size the output equals the unsplit MLP's, gelu(x W1ᵀ + b1) W2ᵀ + b2")
def unsplit(kit):
    c = CASES[2]
    x, W1, b1, W2, b2, _ = kit.inputs(c)
    for N in (1, 2, 3, 4, 6, 12):
        want = kit.reference((x, W1, b1, W2, b2, N))  # the unsplit MLP's output (or the convention's it follows)
        got = kit.user((x, W1, b1, W2, b2, N))
        try:
            compare(got, want, "y", "(B, T, D)", tol=kit.tolerance("float64"))
        except Fail as fail:
            raise Fail(t("{label}, world_size={N}: {fail}", label=c.label, N=N, fail=fail.message),
                       t("with the right shards the sum over the ranks is the full product: check that W1 is split by "
                         "rows and W2 by columns over the same block of hidden units, that GELU acts on each shard, "
                         "and that b2 is added once")) from None
