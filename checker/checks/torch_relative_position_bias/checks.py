"""Hidden checks: T5's relative position bias, the bucket function and the bias tensor.

TARGET (relative_position_bias) goes through the standard checks; relative_position_bucket is
compared below on every offset of a range, with its own named mistakes.
"""

import math

import torch

from checker.kit import Fail, Mistake, case, check, compare, expect_structure
from checker.lang import t

TARGET = "relative_position_bias"
DEVICE = True  # the positions are built inside: they must follow weight's device
OUTPUTS = [("bias", "(1, H, T_q, T_k)")]

# Every size its own (num_buckets, H, T_q, T_k, max_distance); distances reach past max_distance in
# every case, so the exact range, the log range and the last shared bucket are all used. T_q < T_k in
# cases 2-4 (the queries are the last T_q positions). float32 and float64 logs give the same buckets
# for these settings (checker/checks/torch_relative_position_bias/test_reference.py).
CASES = [
    case(1, num_buckets=32, H=3, T_q=26, T_k=26, max_distance=20, bidirectional=True),
    case(2, num_buckets=12, H=4, T_q=5, T_k=30, max_distance=16, bidirectional=False),
    case(3, num_buckets=10, H=2, T_q=9, T_k=14, max_distance=11, bidirectional=True),
    case(4, num_buckets=16, H=6, T_q=3, T_k=40, max_distance=24, bidirectional=False),
]
TIMING = case(5, num_buckets=32, H=8, T_q=128, T_k=160, max_distance=128, bidirectional=True)
GRADIENTS = True  # the gradient of weight: each table entry collects the cotangents of its bucket

# The bucket function's settings: T5's defaults both ways, and smaller tables with a short max_distance.
_BUCKET_SETTINGS = [(True, 32, 128), (False, 32, 128), (True, 12, 20), (False, 10, 16), (True, 20, 40),
                    (False, 16, 24)]
_OFFSETS = 150  # relative positions -150 .. 150: beyond every max_distance above


def inputs(c, dtype):
    weight = torch.randn(c.num_buckets, c.H, generator=c.generator(), dtype=torch.float64).to(getattr(torch, dtype))
    return weight, c.T_q, c.T_k, c.bidirectional, c.max_distance


def _offsets():
    return torch.arange(-_OFFSETS, _OFFSETS + 1).view(1, -1)  # (1, 301): any shape must work


# ----------------------------------------------------------------------------- named mistakes


def bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128, *, sign=1, halve="both",
           log=True, boundary=0, rounding="trunc", top=1, future="clamp", zero="lower", log_base="ratio",
           span="rest"):
    """T5's bucket function with knobs; every knob at its default gives HF T5's answer."""
    rp = sign * relative_position
    offset = torch.zeros_like(rp)
    n = num_buckets
    if bidirectional:
        half = num_buckets // 2
        upper = (rp >= 0) if zero == "upper" else (rp > 0)
        offset = upper.long() * (half if halve in ("both", "offset") else num_buckets)
        n = half if halve == "both" else num_buckets
        distance = rp.abs()
    else:
        distance = rp.abs() if future == "abs" else (-rp).clamp(min=0)
    max_exact = n // 2
    if not log:
        return offset + distance.clamp(max=n - 1)
    is_small = distance < max_exact + boundary
    denominator = math.log(max_distance) if log_base == "max_distance" else math.log(max_distance / max_exact)
    scaled = torch.log(distance.double() / max_exact) / denominator * (n if span == "all" else n - max_exact)
    rounded = {"trunc": scaled.trunc(), "round": scaled.round(), "ceil": scaled.ceil()}[rounding]
    large = max_exact + boundary + rounded.clamp(min=-1, max=n).long()
    large = large.clamp(max=n - top)
    return offset + torch.where(is_small, distance, large)


_BUCKET_EXPLAIN = {
    "sign flipped": (
        "your buckets are those of query - key: the relative position is key - query (HF T5: memory_position - "
        "context_position), so a key in the PAST has a negative relative position; in the bidirectional case the "
        "upper half of the buckets is for keys after the query"),
    "no log buckets": (
        "your buckets are the distance itself, clamped to the last bucket: only distances below max_exact = n // 2 "
        "get a bucket each; from max_exact up to max_distance the buckets grow with the LOG of the distance, "
        "max_exact + int(log(d / max_exact) / log(max_distance / max_exact) * (n - max_exact))"),
    "halving forgotten": (
        "your bidirectional buckets do not halve num_buckets: keys after the query must get num_buckets // 2 added "
        "(not num_buckets), and the exact and log buckets are then counted within that half (num_buckets //= 2 "
        "first, as T5 does)"),
    "halved for the offset only": (
        "your bidirectional buckets add num_buckets // 2 for keys after the query, but count the exact and log "
        "buckets over all num_buckets, so the two halves overlap: halve num_buckets itself (num_buckets //= 2) "
        "before max_exact = num_buckets // 2 and the log part"),
    "off by one at the exact/log boundary": (
        "your log buckets start one bucket late: distances below max_exact = n // 2 get bucket = distance, and the "
        "first log bucket IS max_exact (log(max_exact / max_exact) = 0): bucket = max_exact + int(log(d / max_exact) "
        "/ log(max_distance / max_exact) * (n - max_exact)), no + 1"),
    "log bucket rounded": (
        "your log buckets are rounded to the nearest integer: T5 truncates, max_exact + (log(...) / log(...) * "
        "(n - max_exact)).long() (.long() and int() drop the fraction)"),
    "log bucket rounded up": (
        "your log buckets are rounded up (ceil): T5 truncates with .long(), so a distance just past a bucket "
        "boundary stays in the lower bucket"),
    "clamped to n": (
        "your farthest distances get bucket n (num_buckets, or num_buckets // 2 per half): the last bucket is "
        "n - 1, min(bucket, n - 1), so every distance from max_distance on shares it"),
    "causal future keys": (
        "your causal buckets use |relative_position|, so a future key gets the bucket of a past key as far away: "
        "with bidirectional=False every key after the query counts as distance 0, "
        "max(-relative_position, 0)"),
    "zero in the upper half": (
        "your bidirectional buckets put relative position 0 (the query's own key) in the upper half: only keys "
        "AFTER the query, relative_position > 0, get num_buckets // 2 added"),
    "log over max_distance": (
        "your log buckets divide by log(max_distance): the log range runs from max_exact to max_distance, so "
        "divide by log(max_distance / max_exact)"),
    "log part times n": (
        "your log buckets multiply by n, the buckets of the whole half: the log part fills only the buckets left "
        "after the exact ones, so multiply by n - max_exact, max_exact + int(log(d / max_exact) / "
        "log(max_distance / max_exact) * (n - max_exact))"),
}

_BUCKET_KNOBS = {
    "sign flipped": {"sign": -1},
    "no log buckets": {"log": False},
    "halving forgotten": {"halve": "none"},
    "halved for the offset only": {"halve": "offset"},
    "off by one at the exact/log boundary": {"boundary": 1},
    "log bucket rounded": {"rounding": "round"},
    "log bucket rounded up": {"rounding": "ceil"},
    "clamped to n": {"top": 0},
    "causal future keys": {"future": "abs"},
    "zero in the upper half": {"zero": "upper"},
    "log over max_distance": {"log_base": "max_distance"},
    "log part times n": {"span": "all"},
}


def _bucket_variant(knobs):
    return lambda rp, bidirectional=True, num_buckets=32, max_distance=128: bucket(
        rp, bidirectional, num_buckets, max_distance, **knobs)


_BUCKET_MISTAKES = [Mistake(name, _bucket_variant(knobs), _BUCKET_EXPLAIN[name]) for name, knobs in _BUCKET_KNOBS.items()]


def bias(weight, T_q, T_k, bidirectional=True, max_distance=128, *, offset=True, always=None, layout="permute",
         **knobs):
    """The (1, H, T_q, T_k) bias with knobs; every knob at its default is right."""
    start = T_k - T_q if offset else 0
    relative = torch.arange(T_k)[None, :] - torch.arange(start, start + T_q)[:, None]  # (T_q, T_k)
    b = bucket(relative, bidirectional if always is None else always, weight.size(0), max_distance, **knobs)
    if layout == "reshape":  # (T_q, T_k, H) reshaped, not permuted: the heads read across the positions
        return weight[b].reshape(1, weight.size(1), T_q, T_k)
    if layout == "reshape square":  # the same on the whole (T_k, T_k) table, its last T_q rows kept
        return bias(weight, T_k, T_k, bidirectional, max_distance, offset=offset, always=always, layout="reshape",
                    **knobs)[:, :, T_k - T_q:]
    return weight[b].permute(2, 0, 1).unsqueeze(0)


def _bias_variant(**knobs):
    return lambda weight, T_q, T_k, bidirectional=True, max_distance=128: bias(
        weight, T_q, T_k, bidirectional, max_distance, **knobs)


MISTAKES = [Mistake(name, _bias_variant(**knobs), _BUCKET_EXPLAIN[name]) for name, knobs in _BUCKET_KNOBS.items()] + [
    Mistake("no query offset", _bias_variant(offset=False),
            "your bias counts the queries from position 0: the T_q queries are the LAST T_q of the T_k positions, "
            "query i is at i' = i + T_k - T_q, so the relative position is j - (i + T_k - T_q)"),
    Mistake("always bidirectional", _bias_variant(always=True),
            "your bias uses bidirectional buckets although bidirectional=False was passed: pass the argument on to "
            "relative_position_bucket"),
    Mistake("always causal", _bias_variant(always=False),
            "your bias uses causal buckets although bidirectional=True was passed: pass the argument on to "
            "relative_position_bucket"),
    Mistake("table read reshaped, not permuted", _bias_variant(layout="reshape"),
            "your bias reshapes the looked-up table, (T_q, T_k, H) -> (1, H, T_q, T_k), instead of moving the head "
            "axis: reshape keeps the memory order, so each head gets numbers of all heads; use "
            "weight[buckets].permute(2, 0, 1).unsqueeze(0) (HF T5: values.permute([2, 0, 1]).unsqueeze(0))"),
    Mistake("table read reshaped whole, not permuted", _bias_variant(layout="reshape square"),
            "your bias reshapes the looked-up table, (T_q, T_k, H) -> (1, H, T_q, T_k), instead of moving the head "
            "axis: reshape keeps the memory order, so each head gets numbers of all heads; use "
            "weight[buckets].permute(2, 0, 1).unsqueeze(0) (HF T5: values.permute([2, 0, 1]).unsqueeze(0))"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance) and "
                    "relative_position_bias(weight, T_q, T_k, bidirectional, max_distance) exist")
def structure(kit):
    expect_structure(kit, "relative_position_bucket", module=False,
                     params=["relative_position", "bidirectional", "num_buckets", "max_distance"])
    expect_structure(kit, TARGET, module=False, params=["weight", "T_q", "T_k", "bidirectional", "max_distance"])


def _setting(bidirectional, num_buckets, max_distance):
    kind = t("bidirectional") if bidirectional else t("causal")
    return t("{kind}, num_buckets={num_buckets}, max_distance={max_distance}", kind=kind, num_buckets=num_buckets,
             max_distance=max_distance)


@check("numerics", "relative_position_bucket equals T5's bucket function on every offset from -150 to 150")
def buckets_exact(kit):
    rp = _offsets()
    for bidirectional, num_buckets, max_distance in _BUCKET_SETTINGS:
        args = (rp, bidirectional, num_buckets, max_distance)
        got = kit.user(args, target="relative_position_bucket")
        want = kit.reference(args, target="relative_position_bucket")
        what = t("relative_position_bucket(j - i, {setting})", setting=_setting(bidirectional, num_buckets, max_distance))
        try:
            compare(got, want, what, "(...)")
        except Fail as fail:
            found = kit.name_mistake(args, got, _BUCKET_MISTAKES, target="relative_position_bucket")
            where = ""
            if isinstance(got, torch.Tensor) and got.shape == want.shape and got.dtype == want.dtype:
                bad = (got != want).view(-1).nonzero()
                if len(bad):
                    k = int(bad[0])
                    where = t(" (relative position {rp}: got bucket {got}, expected {want})",
                              rp=int(rp.view(-1)[k]), got=int(got.view(-1)[k]), want=int(want.view(-1)[k]))
            raise Fail(fail.message + where, found) from None


@check("numerics", "relative_position_bucket's defaults are bidirectional=True, num_buckets=32, max_distance=128")
def bucket_defaults(kit):
    rp = _offsets()
    got = kit.user((rp,), target="relative_position_bucket")
    compare(got, kit.reference((rp, True, 32, 128), target="relative_position_bucket"),
            t("relative_position_bucket(j - i) with its defaults"), "(...)")


@check("properties", "causal buckets: every key after the query shares bucket 0 with the query itself")
def causal_future(kit):
    rp = torch.arange(0, 40).view(1, -1)  # the query itself and keys after it
    got = kit.user((rp, False, 16, 24), target="relative_position_bucket")
    if not isinstance(got, torch.Tensor) or got.shape != rp.shape:
        raise Fail(t("relative_position_bucket should return a tensor of the shape of relative_position"))
    if (got != 0).any():
        k = int((got != 0).view(-1).nonzero()[0])
        raise Fail(t("with bidirectional=False, relative position {rp} (a key {rp} steps after the query) got bucket "
                     "{got}: a causal model never attends to the future, so T5 sends every future key to bucket 0, "
                     "distance = max(-relative_position, 0)", rp=k, got=int(got.view(-1)[k])))


@check("properties", "the bias depends on j - i only, and a decode step (the last T_q queries) gets the last T_q rows")
def decode_rows(kit):
    c = CASES[0]  # T_q == T_k: the whole sequence
    weight, T, _, bidirectional, max_distance = inputs(c, "float64")
    whole = kit.user((weight, T, T, bidirectional, max_distance))
    if not isinstance(whole, torch.Tensor) or whole.shape != (1, c.H, T, T):
        raise Fail(t("{label}: the bias should be a tensor of shape (1, H, T_q, T_k) = {want}", label=c.label,
                     want=(1, c.H, T, T)))
    for last in (1, 4):
        step = kit.user((weight, last, T, bidirectional, max_distance))
        try:
            what = (t("the bias for the last query alone") if last == 1
                    else t("the bias for the last {n} queries alone", n=last))
            compare(step, whole[:, :, -last:], what, "(1, H, T_q, T_k)")
        except Fail as fail:
            raise Fail(t("{label}: {fail}. With T_q < T_k the queries are the LAST T_q positions: query i is at "
                         "i + T_k - T_q, relative position j - (i + T_k - T_q)", label=c.label, fail=fail),
                       kit.name_mistake((weight, last, T, bidirectional, max_distance), step)) from None
