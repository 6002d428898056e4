"""Hidden checks: a paged KV cache (vLLM's PagedAttention layout): append, gather, attend.

The standard checks run attend on pools whose every slot holds a value (the other sequences' tokens, stale
data), through block tables of scattered block ids, with sequences whose last block is partly filled. gather
and append are checked below on their own cases, then a whole run: two sequences appended in turns to one
pool, until it runs out.
"""

import math

import torch

from checker.kit import FLOAT32_INSIDE, Fail, Mistake, UserError, case, check, compare, expect_raises, expect_structure
from checker.lang import t

TARGET = "attend"
OUTPUTS = [("out", "(T_q, H, d_k)")]
DEVICE = True  # the positions and the causal mask are built inside: they must follow q's device
WRITES = {"append": (1, 2)}  # append may write the tokens into the given pools in place (vLLM's reshape_and_cache)

# Every dimension its own size; L never a multiple of b (a partly filled last block) but in case 4. T_q = 1
# (decoding), a chunk of 3, the whole sequence (prefill), a chunk of 4.
CASES = [
    case(1, N=9, b=4, H=3, d_k=5, L=10, T_q=1),
    case(2, N=7, b=3, H=2, d_k=4, L=8, T_q=3),
    case(3, N=6, b=5, H=4, d_k=3, L=11, T_q=11),
    case(4, N=12, b=2, H=2, d_k=6, L=8, T_q=4),
]
TIMING = case(5, N=64, b=16, H=8, d_k=64, L=700, T_q=1)

# gather: the same pools and tables (float64 and float32), and a sequence of one token.
_GATHER_CASES = [*CASES, case(6, N=5, b=4, H=2, d_k=3, L=1, T_q=1)]

# append: a sequence of L tokens gets T more. Case 12: they cross into two new blocks (first: the most evidence for
# a diagnosis); 11: they fit in its last block (no new block); 13: an empty sequence (a prefill over three blocks); 14: its last block is full (L = 2b);
# 15: no token (T = 0); 16: a decode step, one token into a block with room (the append a server makes most).
_APPEND_CASES = [
    case(12, N=9, b=3, H=2, d_k=4, L=7, T=6),
    case(11, N=8, b=4, H=3, d_k=5, L=5, T=2),
    case(13, N=7, b=4, H=2, d_k=3, L=0, T=10),
    case(14, N=6, b=5, H=4, d_k=2, L=10, T=3),
    case(15, N=5, b=3, H=2, d_k=4, L=4, T=0),
    case(16, N=6, b=4, H=2, d_k=3, L=5, T=1),
]

# The whole run: sequences A and B append in turns to one pool of N blocks (prompt of 6 for A, 5 for B, then
# one token each, a chunk of 4 for A, ...), gather and attend after every step; the last append asks for more
# blocks than are left.
_RUN = case(21, N=7, b=3, H=2, d_k=4, steps="A 6, B 5, A 1, B 1, A 4, B 3, A 1, B 9")
_STEPS = [("A", 6), ("B", 5), ("A", 1), ("B", 1), ("A", 4), ("B", 3), ("A", 1), ("B", 9)]


def _table(c, L, salt=2):
    """The block table of a sequence of L tokens: ceil(L / b) distinct block ids, scattered over the pool."""
    n = (L + c.b - 1) // c.b
    return torch.randperm(c.N, generator=c.generator(salt=salt))[:n]


def _pools(c, dtype):
    """Pools whose every slot holds a value: other sequences' tokens and stale data look the same."""
    g = c.generator(salt=1)
    d = getattr(torch, dtype)
    k_pool = torch.randn(c.N, c.b, c.H, c.d_k, generator=g, dtype=torch.float64)
    v_pool = torch.randn(c.N, c.b, c.H, c.d_k, generator=g, dtype=torch.float64)
    return k_pool.to(d), v_pool.to(d)


def inputs(c, dtype):
    k_pool, v_pool = _pools(c, dtype)
    q = torch.randn(c.T_q, c.H, c.d_k, generator=c.generator(salt=3), dtype=torch.float64)
    return q.to(getattr(torch, dtype)), k_pool, v_pool, _table(c, c.L), c.L


def _gather_inputs(c, dtype="float64"):
    k_pool, v_pool = _pools(c, dtype)
    return k_pool, v_pool, _table(c, c.L), c.L


def _append_inputs(c, dtype="float64"):
    """The pools, the sequence's table, L, T new tokens, and the free queue: the blocks no table holds, shuffled
    (a pool in use hands out its blocks in no particular order)."""
    k_pool, v_pool = _pools(c, dtype)
    table = _table(c, c.L)
    held = set(table.tolist()) | set(torch.randperm(c.N, generator=c.generator(salt=4))[:1].tolist())  # another's
    free = torch.tensor([i for i in torch.randperm(c.N, generator=c.generator(salt=5)).tolist() if i not in held],
                        dtype=torch.int64)
    g = c.generator(salt=6)
    d = getattr(torch, dtype)
    k = torch.randn(c.T, c.H, c.d_k, generator=g, dtype=torch.float64).to(d)
    v = torch.randn(c.T, c.H, c.d_k, generator=g, dtype=torch.float64).to(d)
    return k_pool, v_pool, table, c.L, k, v, free


def _append(k_pool, v_pool, block_table, seq_len, k, v, free_blocks):
    """append written out once more: the blocks needed, from the front of the queue, each token at its slot."""
    b, T = k_pool.shape[1], k.shape[0]
    need = -(-(seq_len + T) // b) - len(block_table)
    if need > len(free_blocks):
        raise ValueError("out of blocks")
    table = torch.cat([block_table, free_blocks[:need]])
    pos = torch.arange(seq_len, seq_len + T)
    k_pool, v_pool = k_pool.clone(), v_pool.clone()
    k_pool[table[pos // b], pos % b], v_pool[table[pos // b], pos % b] = k, v
    return k_pool, v_pool, table, free_blocks[need:]


# ----------------------------------------------------------------------------- named mistakes
# One the error model cannot express: its rewrites never turn a queue into a stack (the front of a sequence for its
# back, in reverse order).


def _from_the_back(k_pool, v_pool, block_table, seq_len, k, v, free_blocks):
    k_pool, v_pool, table, rest = _append(k_pool, v_pool, block_table, seq_len, k, v, free_blocks.flip(0))
    return k_pool, v_pool, table, rest.flip(0)


MISTAKES = [
    Mistake("free blocks taken from the back", _from_the_back,
            "your append takes its new blocks from the END of the free queue, as a stack (free_blocks.pop(), "
            "free_blocks[-need:]): the contract hands them out from the FRONT, free_blocks[:need], as vLLM's "
            "FreeKVCacheBlockQueue.popleft; a freed block goes to the back, so the blocks freed last are reused last, "
            "which keeps their cached prefixes longest"),
]


_APPEND_OUTPUTS = [("k_pool", "(N, b, H, d_k)"), ("v_pool", "(N, b, H, d_k)"), ("block_table", "(n + new,)"),
                   ("free_blocks", "(F - new,)")]
_GATHER_OUTPUTS = [("k", "(L, H, d_k)"), ("v", "(L, H, d_k)")]


def _attention(q, k, v):
    """Causal attention of the last T_q positions over contiguous (L, H, d_k) keys, written out once more."""
    T_q, L = q.shape[0], k.shape[0]
    s = torch.einsum("ihd,jhd->hij", q, k) / math.sqrt(q.shape[-1])
    visible = torch.arange(L)[None, :] <= torch.arange(L - T_q, L)[:, None]
    return torch.einsum("hij,jhd->ihd", torch.softmax(s.masked_fill(~visible, float("-inf")), dim=-1), v)


# ----------------------------------------------------------------------------- checks


@check("structure", "append(k_pool, v_pool, block_table, seq_len, k, v, free_blocks), gather(k_pool, v_pool, "
                    "block_table, seq_len) and attend(q, k_pool, v_pool, block_table, seq_len) are functions")
def structure(kit):
    expect_structure(kit, "append", module=False,
                     params=["k_pool", "v_pool", "block_table", "seq_len", "k", "v", "free_blocks"])
    expect_structure(kit, "gather", module=False, params=["k_pool", "v_pool", "block_table", "seq_len"])
    expect_structure(kit, TARGET, module=False, params=["q", "k_pool", "v_pool", "block_table", "seq_len"])


@check("numerics", "gather: the sequence's L tokens in order, read through its block table (float64 and float32)")
def gather_numerics(kit):
    for dtype in ("float64", "float32"):
        for c in _GATHER_CASES:
            args = _gather_inputs(c, dtype)
            got, want = kit.user(args, target="gather"), kit.reference(args, target="gather")
            kit.judge(c.label, args, got, want, _GATHER_OUTPUTS, target="gather", dtype=dtype,
                      what=t(", {dtype}", dtype=dtype),
                      others=tuple(_gather_inputs(o, dtype) for o in _GATHER_CASES if o is not c))


@check("numerics", "append: the tokens at their slots, new blocks from the front of the free queue, only as many as "
                   "needed (float64 and float32)")
def append_numerics(kit):
    for dtype in ("float64", "float32"):
        for c in _APPEND_CASES:
            args = _append_inputs(c, dtype)
            got, want = kit.user(args, target="append"), kit.reference(args, target="append")
            kit.judge(c.label, args, got, want, _APPEND_OUTPUTS, target="append", dtype=dtype,
                      what=t(", {dtype}", dtype=dtype),
                      others=tuple(_append_inputs(o, dtype) for o in _APPEND_CASES if o is not c))


@check("properties", "append raises ValueError when the free queue holds too few blocks")
def out_of_blocks(kit):
    expect_raises(_out_of_blocks(kit), _OUT_OF_BLOCKS)


_OUT_OF_BLOCKS = ("a sequence that runs out of blocks writes past its table (an IndexError deep inside) or over another "
                  "sequence's block; the scheduler must learn it so that it can preempt")


def _out_of_blocks(kit) -> list:
    """The calls that must raise: T = 10 in an empty sequence, b = 4, three blocks needed, two free and none free."""
    c = _APPEND_CASES[2]
    k_pool, v_pool, table, L, k, v, free = _append_inputs(c)
    return [(f"append(k_pool, v_pool, block_table={table.tolist()}, seq_len={L}, k[{c.T}], v[{c.T}], "
             f"free_blocks={free[:n].tolist()})",
             lambda n=n: kit.user((k_pool, v_pool, table, L, k, v, free[:n]), target="append")) for n in (2, 0)]


def _run_user(kit, c):
    """The whole run through the user's append, gather and attend; the first wrong step raises Fail."""
    k_pool, v_pool = _pools(c, "float64")
    free = torch.randperm(c.N, generator=c.generator(salt=5))
    tables = {"A": torch.zeros(0, dtype=torch.int64), "B": torch.zeros(0, dtype=torch.int64)}
    tokens = {"A": [], "B": []}
    g = c.generator(salt=6)
    done = []
    for i, (seq, T) in enumerate(_STEPS):
        k = torch.randn(T, c.H, c.d_k, generator=g, dtype=torch.float64)
        v = torch.randn(T, c.H, c.d_k, generator=g, dtype=torch.float64)
        L = sum(x.shape[0] for x, _ in tokens[seq])
        if (L + T + c.b - 1) // c.b - tables[seq].shape[0] > free.shape[0]:
            expect_raises(_out_of_blocks(kit)[-1:] + [  # the plain case first: whether the code raises at all
                (t("step {i} ({steps}): append of {T} tokens to {seq} with {F} free block(s)", i=i + 1,
                   steps=", ".join(done + [f"{seq} {T}"]), T=T, seq=seq, F=free.shape[0]),
                 lambda: kit.user((k_pool, v_pool, tables[seq], L, k, v, free), target="append"))], _OUT_OF_BLOCKS)
            return
        got = kit.user((k_pool, v_pool, tables[seq], L, k, v, free), target="append")
        if not isinstance(got, (tuple, list)) or len(got) != 4:
            return  # append's numerics report it
        k_pool, v_pool, tables[seq], free = got
        tokens[seq].append((k, v))
        done.append(f"{seq} {T}")
        L += T
        want_k = torch.cat([x for x, _ in tokens[seq]])
        want_v = torch.cat([y for _, y in tokens[seq]])
        q = torch.randn(min(T, L), c.H, c.d_k, generator=g, dtype=torch.float64)
        where = t("step {i} ({steps}), sequence {seq}", i=i + 1, steps=", ".join(done), seq=seq)
        try:
            gathered = kit.user((k_pool, v_pool, tables[seq], L), target="gather")
            if not isinstance(gathered, (tuple, list)) or len(gathered) != 2:
                return  # gather's numerics report it
            compare(gathered[0], want_k, "k", "(L, H, d_k)")
            compare(gathered[1], want_v, "v", "(L, H, d_k)")
        except Fail as fail:
            if tuple(gathered[0].shape) != tuple(want_k.shape):  # not where the tokens are: how many are read
                raise Fail(t("{where}: after your own appends, {fail}", where=where, fail=fail.message),
                           fail.diagnosis, general=fail.general) from None
            raise Fail(t("{where}: after your own appends, {fail}", where=where, fail=fail.message),
                       t("the tokens your append wrote are not where your gather reads them, or another sequence's "
                         "append wrote over them: both must map position p to block block_table[p // b], offset "
                         "p % b, and a block handed out must leave the free queue")) from None
        try:
            compare(kit.user((q, k_pool, v_pool, tables[seq], L)), _attention(q, want_k, want_v), "out",
                    "(T_q, H, d_k)", tol=FLOAT32_INSIDE)  # where the tokens are, not how precise: float32 inside too
        except Fail as fail:
            raise Fail(t("{where}: your gather returns the tokens appended, but {fail}", where=where, fail=fail.message),
                       t("attend differs from causal attention over the tokens gather returns: the queries are the "
                         "last T_q positions, so query i sees keys 0 .. L - T_q + i, scaled by 1/√d_k, softmax over "
                         "the keys")) from None


@check("properties", "two sequences appended in turns to one pool: after each step, gather returns the tokens "
                     "appended and attend equals attention over them; the pool runs out at the end")
def whole_run(kit):
    _run_user(kit, _RUN)


@check("hygiene", "append leaves the caller's block_table, free_blocks, k and v unchanged")
def append_hygiene(kit):
    c = _APPEND_CASES[0]
    sent = _append_inputs(c)
    try:
        _, after = kit.user(sent, target="append", return_args=True)
    except UserError as err:
        if err.not_implemented:
            raise
        return  # append's numerics report it
    try:
        for i, name in ((2, "block_table"), (6, "free_blocks"), (4, "k"), (5, "v")):
            compare(after[i], sent[i], name, exact=True)
    except Fail as fail:
        raise Fail(t("{label}: append modified its input ({fail})", label=c.label, fail=fail.message),
                   t("the caller's block table or free queue is changed in place: return new tensors (torch.cat, "
                     "a slice), so that a failed or repeated step leaves the scheduler's state as it was")) from None
