"""Hidden checks: NumPy sinusoidal positional encoding.

positional_encoding(position, d_model) takes two ints and no arrays, so the standard checks
("float32 in gives float32 out", "leaves the caller's inputs unchanged") do not apply: this
module defines no OUTPUTS and writes its own shapes, numerics and hygiene checks. The dtype
contract is float64; the NumPy tutorial's final .astype(np.float32) (the float64 table rounded once to
float32) is an accepted variant.
"""

import re

import numpy as np

from checker.lang import t
from checker.kit import Accepted, Fail, Mistake, UserError, case, check, compare, expect_structure, shape_relation

_TRACK = "numpy"  # no autograd checks
TARGET = "positional_encoding"
_LEGEND = "(1, position, d_model)"

# position and d_model differ in every case, so a transposed table cannot pass; two cases have
# an odd d_model, and case 3 reaches angles of ~2000 rad, where computing in float32 shows.
CASES = [
    case(1, position=7, d_model=12),
    case(2, position=10, d_model=7),
    case(3, position=2048, d_model=24),
    case(4, position=1, d_model=5),
]


def inputs(c, dtype="float64"):
    """The arguments: two ints (dtype is ignored: the table is float64 whatever the caller wants)."""
    return (c.position, c.d_model)


# ----------------------------------------------------------------------------- named mistakes


def table(position, d_model, *, base=10000.0, first=0, exponent="2i", swap=False, halves=False,
          invert=False, odd_last="sin", batch=True, dtype=np.float64, parity="column"):
    """The table with knobs; every knob at its default gives the right answer."""
    pos = np.arange(first, first + position)[:, None]  # (T, 1)
    j = np.arange(d_model)[None, :]  # (1, D)
    power = {"2i": 2 * (j // 2), "i": j // 2, "j": j, "zero": 0 * j, "precedence": 0 * j}[exponent] / d_model
    angles = pos * base ** power if invert else pos / base ** power  # (T, D)
    if exponent == "precedence":  # 10000 ** 2i / d_model: the power taken before the division
        angles = pos / (base ** (2.0 * (j // 2)) / d_model)
    if halves:  # all sin columns first, then all cos columns
        n_sin = (d_model + 1) // 2
        pe = np.concatenate([np.sin(angles[:, 0::2]), np.cos(angles[:, 0::2])[:, : d_model - n_sin]], axis=1)
    else:
        even = (j if parity == "column" else pos) % 2 == 0
        pe = np.where(even != swap, np.sin(angles), np.cos(angles))
    if d_model % 2 and odd_last == "zero":
        pe[:, -1] = 0.0
    pe = pe.astype(dtype)
    return pe[None] if batch else pe


def _variant(**knobs):
    return lambda position, d_model: table(position, d_model, **knobs)


MISTAKES = [
    Mistake("no batch axis", _variant(batch=False),
            "your table has no batch axis: return shape (1, position, d_model), e.g. pe[np.newaxis], "
            "so that it broadcasts over (B, T, D) embeddings"),
    Mistake("sin and cos swapped", _variant(swap=True),
            "your table has sin and cos swapped: even columns (0, 2, 4, ...) take sin, odd columns take cos"),
    Mistake("positions from 1", _variant(first=1),
            "your positions start at 1: they start at 0 (np.arange(position)), so row 0 is [0, 1, 0, 1, ...]"),
    Mistake("exponent i/d_model", _variant(exponent="i"),
            "your exponent is i/d_model: it is 2i/d_model, i.e. pos / 10000^(2i/d_model) with i = j // 2 "
            "for column j (equivalently, the even column index 2 * (j // 2) over d_model)"),
    Mistake("exponent j/d_model", _variant(exponent="j"),
            "your odd columns use the exponent j/d_model with j their own index: columns 2i and 2i+1 share one "
            "frequency, 1 / 10000^(2i/d_model), so use 2 * (j // 2), not j"),
    Mistake("every frequency 1", _variant(exponent="zero"),
            "every column pair rotates at the same frequency, the position itself: the exponent 2i/d_model came "
            "out 0 (integer division, 2 * i // d_model); divide in floating point, 2 * i / d_model"),
    Mistake("power before the division", _variant(exponent="precedence"),
            "your angles are pos / (10000^(2i) / d_model): the exponent is the whole 2i/d_model, "
            "np.power(10000.0, 2 * i / d_model)"),
    Mistake("sin or cos chosen by the position", _variant(parity="position"),
            "your table picks sin or cos by the parity of the POSITION (the row): it is the column that decides, "
            "sin in the even columns 2i, cos in the odd ones 2i+1"),
    Mistake("base 1000", _variant(base=1000.0),
            "your table uses base 1000: the paper's wavelengths grow as 10000^(2i/d_model), base 10000"),
    Mistake("frequency inverted", _variant(invert=True),
            "your table multiplies pos by 10000^(2i/d_model): divide by it, i.e. multiply by "
            "exp(-2i · ln(10000) / d_model), with the minus sign"),
    Mistake("sin half then cos half", _variant(halves=True),
            "your table puts every sin column first and every cos column after: the paper interleaves them, "
            "pe[:, 0::2] = sin and pe[:, 1::2] = cos"),
    Mistake("odd last column zero", _variant(odd_last="zero"),
            "with an odd d_model your last column is 0: it is a sin column, sin(pos / 10000^((d_model-1)/d_model))"),
]


# The NumPy tutorial's table: computed in float64, then .astype(np.float32). One rounding to float32 is at most
# 2^-24 ≈ 6e-8 relative; 3e-7 leaves room for a float64 value one ulp away from the reference's to round
# the other way. A table computed in float32 throughout is off by ~1e-4 at case 3's angles of ~2000 rad.
_FLOAT32_CAST = (3e-7, 1e-12)
_SEED000_CAST = ("your table is float32, the float64 table rounded once (the NumPy tutorial ends with .astype(np.float32)): "
                 "right to float32's precision. This kata's contract is float64: return the table you computed, "
                 "without the cast (float32 keeps about 7 significant digits, and a float64 model would add a "
                 "float32 table to its float64 embeddings)")


_FLOAT32_THROUGHOUT = ("your float32 table is further from the float64 table than one rounding: it was computed in "
                       "float32 (positions, rates or angles), and an angle of ~2000 rad keeps only about 1e-4 of a "
                       "radian there. Compute the table in float64 (this kata's contract), and cast it at the end if a "
                       "model needs float32")


def call(kit, c, args=None):
    """The user's table for case c; a crash that only an odd d_model causes gets a pointed message."""
    args = inputs(c) if args is None else args
    try:
        return kit.user(args)
    except UserError as err:
        position, d_model = args
        if err.not_implemented or d_model % 2 == 0:
            raise
        try:
            kit.user((position, d_model + 1))
        except UserError:
            raise err from None  # it crashes with an even d_model too: not an odd-size problem
        lines = re.findall(r"line (\d+)", err.traceback)
        where = t(" (line {line})", line=lines[-1]) if lines else ""
        raise Fail(t("{label}: with an odd d_model your code raised {err}{where}, while d_model={even} works",
                     label=c.label, err=err, where=where, even=d_model + 1),
                   t("an odd d_model has (d_model+1)//2 = {sins} sin columns but only d_model//2 = {coss} cos columns: "
                     "give the cos columns only the first d_model//2 frequencies (the PyTorch notebook tutorial: div_term[:-1]), or compute "
                     "one angle per column", sins=(d_model + 1) // 2, coss=d_model // 2)) from None


def compare_case(kit, c, got, what="positional encoding") -> None:
    expected = kit.reference(inputs(c))
    try:
        compare(got, expected, t(what), _LEGEND)
    except Fail as fail:
        raise Fail(t("{label}: {fail}", label=c.label, fail=fail), kit.name_mistake(inputs(c), got)) from None


# ----------------------------------------------------------------------------- checks


@check("structure", "positional_encoding is a function taking (position, d_model)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["position", "d_model"])


@check("shapes", "returns a NumPy array of shape (1, position, d_model) on every case")
def shapes(kit):
    for c in CASES:
        got = call(kit, c)
        if not isinstance(got, np.ndarray):
            compare(got, kit.reference(inputs(c)), t("{label}: the table", label=c.label), _LEGEND)  # says what came back
        if tuple(got.shape) != (1, c.position, c.d_model):
            want = (1, c.position, c.d_model)
            hint = {(c.position, c.d_model): "in your table the batch axis is missing: return pe[np.newaxis]",
                    (1, c.d_model, c.position): "in your table position and d_model are swapped: rows are positions, "
                                                "columns the d_model features",
                    (c.d_model, c.position): "in your table the rows are features, not positions, and there is no "
                                             "batch axis: rows are positions, then add it with pe[np.newaxis]"}
            hint = hint.get(tuple(got.shape))
            raise Fail(t("{label}: the table should have shape {legend} = {want}, got {got}{hint}", label=c.label,
                         legend=_LEGEND, want=want, got=tuple(got.shape), hint=""),
                       t(hint) if hint else shape_relation(tuple(got.shape), want, _LEGEND), general=not hint)


@check("shapes", "an odd d_model works (1, 3, 9 and 11 columns)")
def odd_sizes(kit):
    for d_model in (1, 3, 9, 11):
        c = case(len(CASES) + 1, position=4, d_model=d_model)
        got = call(kit, c)
        if not isinstance(got, np.ndarray) or tuple(got.shape) != (1, 4, d_model):
            shape = tuple(got.shape) if isinstance(got, np.ndarray) else type(got).__name__
            raise Fail(t("{label}: the table should have shape {legend} = {want}, got {got}{hint}", label=c.label,
                         legend=_LEGEND, want=(1, 4, d_model), got=shape, hint=""),
                       shape_relation(shape, (1, 4, d_model), _LEGEND) if isinstance(shape, tuple) else None,
                       general=True)


@check("numerics", "matches PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(...) in float64")
def numerics(kit):
    cast = False
    for c in CASES:
        got = call(kit, c)
        if isinstance(got, np.ndarray) and got.dtype == np.float32:  # the NumPy tutorial's cast: an accepted variant
            rounded = kit.reference(inputs(c)).astype(np.float32)
            try:
                compare(got, rounded, t("positional encoding (float32, against the float64 table rounded to float32)"),
                        _LEGEND, tol=_FLOAT32_CAST)
            except Fail as fail:
                raise Fail(t("{label}: {fail}", label=c.label, fail=fail),
                           kit.name_mistake(inputs(c), got.astype(np.float64), tol=(1e-4, 1e-5))
                           or t(_FLOAT32_THROUGHOUT)) from None
            cast = True
            continue
        compare_case(kit, c, got)
    if cast:
        raise Accepted(t(_SEED000_CAST))


@check("numerics", "with an odd d_model the last column is a sin column (0 at position 0, not 0 everywhere)")
def odd_last_column(kit):
    # Property only: whether this column has the right frequency is the check above's business.
    c = CASES[1]
    got = call(kit, c)
    if not isinstance(got, np.ndarray) or tuple(got.shape) != (1, c.position, c.d_model):
        raise Fail(t("{label}: the table should have shape {legend} = {want} first", label=c.label, legend=_LEGEND,
                     want=(1, c.position, c.d_model)))
    last = got[0, :, -1].astype(np.float64)
    shown = np.round(last[:4], 4).tolist()
    formula = f"sin(pos / 10000^({c.d_model - 1}/{c.d_model}))"
    if np.all(last == 0):
        raise Fail(t("{label}: the last column (index {index}, even) is 0 everywhere: it is a sin column, {formula}, "
                     "even though it has no cos partner", label=c.label, index=c.d_model - 1, formula=formula))
    if abs(last[0] - 1.0) < 1e-6:
        raise Fail(t("{label}: the last column (index {index}, even) starts {shown}..., a cos column: even columns "
                     "take sin, so it is {formula}", label=c.label, index=c.d_model - 1, shown=shown, formula=formula))


@check("properties", "a shorter table is the start of a longer one (row pos depends on pos only)")
def prefix(kit):
    # Property only (a wrong but consistent table passes): PE(5, 6) == PE(12, 6)[:, :5].
    long, short = call(kit, case(11, position=12, d_model=6)), call(kit, case(12, position=5, d_model=6))
    for got, n in ((long, 12), (short, 5)):
        if not isinstance(got, np.ndarray) or tuple(got.shape) != (1, n, 6):
            raise Fail(t("position={n}, d_model=6: the table should have shape {legend} = {want} first", n=n,
                         legend=_LEGEND, want=(1, n, 6)))
    try:
        compare(short, long[:, :5], t("the table for position=5, d_model=6"), _LEGEND)
    except Fail as fail:
        raise Fail(t("{fail}, compared with the first 5 rows of your table for position=12: row pos depends only on pos "
                     "and d_model, never on how many positions were asked for", fail=fail)) from None


_STALE = ("your table depends on an earlier call: build it from this call's position and d_model; a table kept from "
          "an earlier call must be keyed on both")


@check("hygiene", "the same sizes give the same table after calls with other sizes (no stale cache)")
def no_stale_state(kit):
    # Property only: sizes in a new order, one repeated, so a table cached from an earlier call shows up.
    first = call(kit, case(13, position=12, d_model=6))
    for c in (case(14, position=3, d_model=10), case(15, position=12, d_model=9), case(16, position=14, d_model=6)):
        got = call(kit, c)
        if not isinstance(got, np.ndarray) or tuple(got.shape) != (1, c.position, c.d_model):
            shape = tuple(got.shape) if isinstance(got, np.ndarray) else type(got).__name__
            raise Fail(t("{label}, called after position=12, d_model=6: the table should have shape {legend} = {want}, "
                         "got {got}", label=c.label, legend=_LEGEND, want=(1, c.position, c.d_model), got=shape),
                       t(_STALE))
    again = call(kit, case(13, position=12, d_model=6))
    try:
        compare(again, first, t("the second table for position=12, d_model=6"), _LEGEND)
    except Fail as fail:
        raise Fail(t("{fail}, compared with your own first table for the same sizes", fail=fail), t(_STALE)) from None
