"""Hidden checks: flash attention (tiles over the keys, online softmax, bounded memory).

Besides the standard checks, the memory contract is measured: the user's code runs in the child
under a TorchDispatchMode probe (checker/checks/child/memory_probe.py) that records the largest
tensor storage any operation creates, on cases where a (T_q, T_k) matrix, even for one head,
is several times the bound B·H·max(T_q, T_k)·max(block_size, d_k, d_v).
"""

import math

import torch

from checker.checks.child.memory_probe import flash_attention_memory
from checker.kit import Fail, Mistake, as_outputs, case, check, compare, expect_structure, matches
from checker.lang import t

TARGET = "flash_attention"
OUTPUTS = [("out", "(B, H, T_q, d_v)")]
BATCH_INDEPENDENT = True
DEVICE = True  # the causal mask of a tile is built inside from positions: it must follow q's device

# Every dimension its own size; T_k never a multiple of block_size (a short last tile), except
# case 4 where one tile holds every key. Case 2 has T_q < T_k (a causal offset of 5), case 3 is causal
# self-attention (T_q = T_k, the textbook case).
CASES = [
    case(1, B=2, H=3, T_q=11, T_k=13, d_k=4, d_v=5, block_size=4, causal=False),
    case(2, B=3, H=2, T_q=9, T_k=14, d_k=6, d_v=7, block_size=5, causal=True),
    case(3, B=2, H=4, T_q=10, T_k=10, d_k=3, d_v=5, block_size=4, causal=True),
    case(4, B=3, H=2, T_q=5, T_k=7, d_k=8, d_v=4, block_size=16, causal=False),
]
# Causal with T_q > T_k: the first 4 queries see no key. Beyond the textbook answer (dividing by l
# everywhere gives 0 / 0 there), so a follow-up, held apart from the core cases.
_BLIND = case(11, B=2, H=4, T_q=10, T_k=6, d_k=3, d_v=5, block_size=4, causal=True)
TIMING = case(5, B=2, H=4, T_q=128, T_k=160, d_k=16, d_v=24, block_size=32, causal=True)
# The memory cases: B·H small, T much larger than block_size, d_k, d_v, so that one head's
# (T_q, T_k) matrix is ~2.3x the bound and the whole (B, H, T_q, T_k) one ~4.6x.
_MEMORY_CASES = [
    case(6, B=1, H=2, T_q=37, T_k=45, d_k=6, d_v=5, block_size=8, causal=True),
    case(7, B=2, H=1, T_q=43, T_k=34, d_k=7, d_v=4, block_size=6, causal=False),
]
# The online-softmax cases: T_k (61) unlike every other size, so a float tensor with an axis of 61
# and none of d_k or d_v is a row of scores over every key (a K or V copy keeps its d axis).
_ROW_CASES = [
    case(9, B=1, H=2, T_q=5, T_k=61, d_k=6, d_v=7, block_size=8, causal=False),
    case(10, B=2, H=1, T_q=9, T_k=61, d_k=4, d_v=3, block_size=7, causal=True),
]
# Scores up to ~±2000: exp() without subtracting a max overflows even in float64 (exp(710) = inf).
_LARGE = case(8, B=2, H=3, T_q=6, T_k=11, d_k=4, d_v=5, block_size=3, causal=False, scores="large: q, k × 30")
# every score of every row near -800: exp(s) underflows to 0 in float64 unless the running max follows the scores
_NEGATIVE = case(12, B=2, H=2, T_q=5, T_k=9, d_k=4, d_v=3, block_size=4, causal=False,
                 scores="very negative: every q·k/√d_k near -800")
_BLOCK_SIZES = (1, 2, 3, 6, 13, 14, 40)  # tried on case 2 (T_k = 14): tiny, not dividing, T_k - 1, T_k, beyond


def inputs(c, dtype):
    g = c.generator()
    dt = getattr(torch, dtype)
    q = torch.randn(c.B, c.H, c.T_q, c.d_k, generator=g, dtype=torch.float64)
    k = torch.randn(c.B, c.H, c.T_k, c.d_k, generator=g, dtype=torch.float64)
    v = torch.randn(c.B, c.H, c.T_k, c.d_v, generator=g, dtype=torch.float64)
    if "scores" in c.extra and c.scores.startswith("large"):
        q, k = q * 30, k * 30
    if "scores" in c.extra and c.scores.startswith("very negative"):
        q[..., 0], k[..., 0] = 40.0, -40.0  # q·k = -1600 + a few, divided by √d_k = 2
    return q.to(dt), k.to(dt), v.to(dt), c.causal, c.block_size


def bound(c) -> int:
    return c.B * c.H * max(c.T_q, c.T_k) * max(c.block_size, c.d_k, c.d_v)


# ----------------------------------------------------------------------------- named mistakes


def tiled(q, k, v, causal=False, block_size=16, *, rescale="both", normalise="end", tail=True, scale=True,
          offset="bottom-right", diagonal=True, running_max=True, empty_rows="zero", keep_max="updated",
          start_max=float("-inf")):
    """Flash attention with knobs; every knob at its default gives the right answer."""
    T_q, T_k = q.size(-2), k.size(-2)
    factor = 1.0 / math.sqrt(q.size(-1)) if scale else 1.0
    m = q.new_full((*q.shape[:-1], 1), start_max)
    l = q.new_zeros((*q.shape[:-1], 1))
    acc = q.new_zeros((*q.shape[:-1], v.size(-1)))
    rows = torch.arange(T_q)[:, None] + ((T_k - T_q) if offset == "bottom-right" else 0)
    stop = T_k if tail else T_k - T_k % block_size
    for start in range(0, stop, block_size):
        k_tile, v_tile = k[..., start:start + block_size, :], v[..., start:start + block_size, :]
        s = q @ k_tile.transpose(-2, -1) * factor
        if causal:
            cols = torch.arange(start, start + k_tile.size(-2))
            hidden = cols > rows if diagonal else cols >= rows
            s = s.masked_fill(hidden, float("-inf"))
        if running_max:
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            shift = m_new.masked_fill(m_new == float("-inf"), 0.0)
        else:
            m_new = shift = torch.zeros_like(m)
        p = torch.exp(s - shift)
        alpha = torch.exp(m - shift) if running_max else torch.ones_like(m)
        if rescale == "none":  # each tile summed under its own max, never brought to a common one
            alpha = torch.ones_like(alpha)
        if rescale == "inverted":  # exp(m_new - m): the ratio upside down
            alpha = torch.exp(shift - m).nan_to_num(0.0, posinf=0.0)
        if keep_max == "old":  # the tile's exponentials taken under the old max
            p = torch.exp(s - m.masked_fill(m == float("-inf"), 0.0))
        l_new = l * (1.0 if rescale == "acc only" else alpha) + p.sum(dim=-1, keepdim=True)
        if normalise == "in loop":  # acc kept normalised, but the old part is not multiplied back by l_old
            acc = (acc * alpha + p @ v_tile) / l_new.masked_fill(l_new == 0, 1.0)
        else:
            acc = (acc if rescale == "l only" else acc * alpha) + p @ v_tile
        l, m = l_new, (m if keep_max == "never" else m_new)
    if normalise == "in loop":
        return acc
    return acc / (l if empty_rows == "nan" else l.masked_fill(l == 0, 1.0))


def _variant(**knobs):
    return lambda q, k, v, causal=False, block_size=16: tiled(q, k, v, causal, block_size, **knobs)


_STARTS_AT_ZERO = ("your running max starts at 0, not -inf: while every score of a row is below 0 it stays 0, and "
                   "exp(s - 0) of scores near -800 underflows to 0 for the whole row; start it at -inf, "
                   "m = torch.full(..., float('-inf')), so that the first tile sets it")

MISTAKES = [
    Mistake("running max starts at 0", _variant(start_max=0.0, empty_rows="nan"), _STARTS_AT_ZERO),
    Mistake("running max starts at 0, empty sums guarded", _variant(start_max=0.0), _STARTS_AT_ZERO),
    Mistake("rescale factor inverted", _variant(rescale="inverted"),
            "your rescale factor is exp(m_new - m_old), upside down: what was summed under the old max is brought to "
            "the new one by alpha = exp(m_old - m_new) <= 1"),
    Mistake("running max never updated", _variant(keep_max="never"),
            "your running max is never updated (m = m_new is missing): every tile is rescaled from -inf, so the "
            "earlier tiles vanish"),
    Mistake("tile exponentials under the old max", _variant(keep_max="old"),
            "your tile's exponentials use the OLD max, exp(s - m_old): take the new max first, m_new = max(m_old, "
            "rowmax(s)), then p = exp(s - m_new), which never exceeds 1"),
    Mistake("normalised inside the loop", _variant(normalise="in loop"),
            "your output equals dividing the accumulator by l inside the loop without undoing the old division: "
            "keep acc unnormalised and divide by l once, after the last tile (or rescale the old acc by "
            "l_old / l_new)"),
    Mistake("last short tile dropped", _variant(tail=False),
            "your output ignores the keys of the last, shorter tile (T_k not a multiple of block_size): loop with "
            "range(0, T_k, block_size) and slice k[..., start:start + block_size, :], which is short at the end"),
    Mistake("missing scale", _variant(scale=False),
            "your output equals attention without the 1/√d_k scale: multiply each tile's scores by "
            "1 / math.sqrt(d_k)"),
    Mistake("no running max", _variant(running_max=False),
            "your output equals exp(scores) without subtracting a running max: it overflows to inf/NaN on large "
            "scores; keep m = max so far and use exp(s - m_new)"),
]
# _variant(empty_rows="nan"), dividing by l everywhere, differs only on _BLIND: a follow-up, not a mistake.


# ----------------------------------------------------------------------------- checks


@check("structure", "flash_attention is a function taking (q, k, v, causal, block_size)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["q", "k", "v", "causal", "block_size"])


@check("masking", "causal: query i uses no key after i + (T_k - T_q)")
def causal_future(kit):
    for c in CASES[1:3]:
        q, k, v, causal, block = kit.inputs(c)
        out = _out(kit.user((q, k, v, causal, block)), c)
        offset = c.T_k - c.T_q
        for j in range(1, c.T_k):  # change keys and values from key j on: queries with i + offset < j must not move
            k2, v2 = k.clone(), v.clone()
            k2[..., j:, :] += 3.0
            v2[..., j:, :] += 10.0
            out2 = _out(kit.user((q, k2, v2, causal, block)), c)
            blind = max(0, min(c.T_q, j - offset))  # queries 0 .. blind-1 see no key >= j
            a, b = out[..., :blind, :], out2[..., :blind, :]
            moved = ((a != b) & ~(a.isnan() & b.isnan())).flatten(0, 1).any(dim=0).any(dim=-1)  # (blind,)
            if moved.any():
                i = int(moved.nonzero()[0])
                if i + offset >= 0:
                    raise Fail(t("{label}: changing the keys and values from position {j} on changed the output of "
                                 "query {i}, which may only see keys <= {last}: the future leaks through your causal "
                                 "mask (query i sees j <= i + (T_k - T_q))", label=c.label, j=j, i=i, last=i + offset))
                raise Fail(t("{label}: changing the keys and values from position {j} on changed the output of query "
                             "{i}, which may see no key at all: the future leaks through your causal mask "
                             "(query i sees j <= i + (T_k - T_q))", label=c.label, j=j, i=i))


def _why():
    return t("Follow-up: with causal=True and T_q > T_k, what does a query that sees no key return? Dividing by l "
             "everywhere gives 0 / 0 = NaN there, and a NaN spreads to the whole batch through the loss and its "
             "gradients; the reference gives such a query a zero output: shift by 0 where the running max is still "
             "-inf and divide by l only where l > 0 (acc / l.masked_fill(l == 0, 1.0))")


@check("masking", "causal with T_q > T_k: a query that sees no key gets a zero output, not NaN", followup=True)
def empty_rows(kit):
    c = _BLIND
    args = kit.inputs(c)
    out = _out(kit.user(args), c)
    blind = c.T_q - c.T_k  # queries 0 .. blind-1 see nothing
    if not torch.allclose(out[..., blind:, :], kit.reference(args)[..., blind:, :], rtol=1e-9, atol=1e-10):
        return  # wrong where queries see keys: the core checks say what is wrong
    rows = out[..., :blind, :]
    if torch.isnan(rows).any():
        raise Fail(t("{label}: queries 0..{last} see no key and came out NaN (0 / 0, or exp(-inf - -inf) when the "
                     "running max is still -inf). {why}", label=c.label, last=blind - 1, why=_why()))
    if (rows != 0).any():
        raise Fail(t("{label}: queries 0..{last} see no key, yet their output is not zero (e.g. {row}). {why}",
                     label=c.label, last=blind - 1, row=rows[0, 0, 0].tolist(), why=_why()))


@check("numerics", "any block_size gives the same output: 1, not dividing T_k, T_k, larger than T_k")
def block_sizes(kit):
    c = CASES[1]
    q, k, v, causal, _ = kit.inputs(c)
    for block in _BLOCK_SIZES:
        args = (q, k, v, causal, block)
        got = _out(kit.user(args), c)
        want = kit.reference(args)
        try:
            compare(got, want, "out", "(B, H, T_q, d_v)")
        except Fail as fail:
            found = kit.name_mistake(args, got)
            raise Fail(t("{label}, block_size={block}: {fail}", label=c.label, block=block, fail=fail.message), found or fail.diagnosis) from None


@check("numerics", "stable on large scores (up to ~±2000) and on rows whose every score is near -800")
def large_scores(kit):
    for c, why in ((_LARGE, _OVERFLOW_WHY), (_NEGATIVE, _UNDERFLOW_WHY)):
        args = kit.inputs(c)
        got = _out(kit.user(args), c)
        try:
            compare(got, kit.reference(args), t("{label}: out", label=c.label), "(B, H, T_q, d_v)")
        except Fail as fail:
            found = kit.name_mistake(args, got)
            if found is None:  # right on ordinary scores, wrong on these: what was seen, not a guessed cause
                ordinary = kit.inputs(CASES[0])
                if matches(_out(kit.user(ordinary), CASES[0]), kit.reference(ordinary)):
                    found = t(why)
            raise Fail(fail.message, found or fail.diagnosis) from None


_OVERFLOW_WHY = ("your output is right on ordinary scores but not on large ones: exp() of a score near 2000 overflows "
                 "to inf (a guard such as nan_to_num only hides it); subtract the running max before exp(), "
                 "p = exp(s - m_new), and rescale what was summed under the old max")


_UNDERFLOW_WHY = ("your output is right on ordinary scores but not on rows whose every score is near -800: there "
                  "exp() underflows to 0 unless what it is taken against follows the scores down; the running max "
                  "starts at -inf and exp(s - m_new) is taken against the max seen so far")


@check("properties", "defaults: causal=False and block_size=16 when not given")
def defaults(kit):
    c = CASES[1]  # causal case, T_k = 14 < 16: one tile
    q, k, v, _, _ = kit.inputs(c)
    got = _out(kit.user((q, k, v)), c)
    compare(got, kit.reference((q, k, v, False, 16)), t("{label}, flash_attention(q, k, v): out", label=c.label),
            "(B, H, T_q, d_v)")


@check("properties", "memory: no tensor larger than B·H·max(T_q, T_k)·max(block_size, d_k, d_v) elements")
def memory(kit):
    for c in _MEMORY_CASES:
        args = kit.inputs(c)
        reply = kit.drive(flash_attention_memory, *args)
        if reply["fused"]:
            raise Fail(t("{label}: your code ran the fused attention kernel {kernel}: the point of the kata is to write "
                         "the tiles and the online softmax yourself", label=c.label, kernel=reply['fused'][0]))
        _out(reply["out"], c)  # the values are judged by the numerics checks
        limit = bound(c)
        if reply["largest"] > limit:
            shape = tuple(reply["shape"])
            quadratic = (c.T_q in shape and c.T_k in shape)
            why = t(": that is a (T_q, T_k) matrix (scores, weights or a mask)") if quadratic else ""
            raise Fail(t("{label}: your code created a tensor of {largest} elements ({op} returned shape {shape}), more "
                         "than the bound B·H·max(T_q, T_k)·max(block_size, d_k, d_v) = {limit}{why}", label=c.label,
                         largest=reply['largest'], op=reply['op'], shape=shape, limit=limit, why=why),
                       t("flash attention never holds a (T_q, T_k) matrix: compute the scores one tile of keys at a "
                         "time and build a tile's causal mask from positions") if quadratic else None)


@check("properties", "online softmax: scores exist for one tile of block_size keys at a time, never a whole row")
def online_softmax(kit):
    for c in _ROW_CASES:
        reply = kit.drive(flash_attention_memory, *kit.inputs(c))
        _out(reply["out"], c)
        if reply["row"]:
            op, shape = reply["row"]
            raise Fail(t("{label}: your code made a tensor of shape {shape} ({op}) that spans all T_k = {T_k} keys",
                         label=c.label, shape=tuple(shape), op=op, T_k=c.T_k),
                       t("flash attention never holds a whole row of keys (tiling the queries only is memory-efficient "
                         "attention, not flash attention): take the keys block_size at a time and carry a running max m "
                         "and sum l per query, rescaling the accumulator by exp(m_old - m_new) when the max grows"))




def _out(value, c):
    (out,) = as_outputs(value, OUTPUTS)
    want = (c.B, c.H, c.T_q, c.d_v)
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != want:
        got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise Fail(t("{label}: flash_attention should return out of shape (B, H, T_q, d_v) = {want}, got {got}",
                     label=c.label, want=want, got=got))
    return out
