"""Hidden checks: rotary position embedding (RoPE), both pair layouts."""

import torch

from checker.kit import Fail, Mistake, expect_raises, case, check, compare, describe, expect_structure
from checker.lang import t

TARGET = "apply_rope"
HALF = True  # the stub: the result keeps x's dtype, half precision too
DEVICE = True  # the frequencies and angles are built inside: they must follow x's device
OUTPUTS = [("output", "(B, H, T, d_k)")]

# Tolerances, the same for both dtypes. The angle p·θ_i is often computed in float32 whatever x is:
# HF LLaMA's inv_freq calls .float(), and torch.arange(0, d_k, 2) / d_k is float32. That is standard,
# correct code, so float64 results are held only to float32 accuracy: the angle rounded to float32
# (half an ulp of 40 is 1.9e-6) and θ_i's ~1e-7 relative error move cos/sin by up to ~5e-6, times
# |x| ~ 3 about 1.5e-5. 1e-4 keeps a 6x margin, while every real mistake (a wrong frequency, sign
# or pairing) moves some value by more than 1e-2.
TOLERANCES = {"float64": (1e-4, 1e-4), "float32": (1e-4, 1e-4)}

# Every dimension its own size (d_k / 2 too); positions that do not start at 0 (case 1: a decode
# step after 7 cached tokens), a case that is not consecutive, a base other than 10000: each mistake below changes some case.
CASES = [
    case(1, B=2, H=3, T=5, d_k=8, layout="half", base=10000.0, positions=(7, 8, 9, 10, 11)),
    case(2, B=3, H=5, T=6, d_k=4, layout="interleaved", base=10000.0, positions=(0, 1, 2, 3, 4, 5)),
    case(3, B=2, H=4, T=7, d_k=6, layout="interleaved", base=500.0, positions=tuple(range(20, 27))),
    case(4, B=3, H=2, T=4, d_k=10, layout="half", base=100.0, positions=(5, 2, 31, 0)),
]
TIMING = case(5, B=4, H=8, T=256, d_k=64, layout="half", base=10000.0, positions=tuple(range(256)))


def make_positions(c) -> torch.Tensor:
    return torch.tensor(c.positions, dtype=torch.int64)


def inputs(c, dtype):
    x = torch.randn(c.B, c.H, c.T, c.d_k, generator=c.generator(), dtype=torch.float64).to(getattr(torch, dtype))
    return x, make_positions(c), c.layout, c.base


# ----------------------------------------------------------------------------- named mistakes


def rope(x, positions, layout="half", base=10000.0, *, pairs=None, exponent="2i", order=None, sign=1.0,
         ignore_positions=False, minus=True, fixed_base=None, multiply=False, cos_sin_swapped=False):
    """RoPE written per column, x·cos + rotate(x)·sin, with knobs; every knob at its default is right."""
    if layout not in ("half", "interleaved"):
        raise ValueError(layout)
    pairs, d = pairs or layout, x.size(-1)
    order = order or pairs
    col = torch.arange(d)
    i = col % (d // 2) if order == "half" else col // 2  # the pair index of every column
    i, col = i.double(), col.double()
    e = {"2i": 2 * i / d, "i": i / d, "column": col / d, "zero": 0 * i}[exponent]
    theta = float(fixed_base or base) ** (e if multiply else -e)  # (d_k,)
    pos = torch.arange(x.size(-2)) if ignore_positions else positions
    angle = pos.double()[:, None] * theta  # (T, d_k)
    angle = angle.to(x.dtype)
    cos, sin = (angle.sin(), angle.cos()) if cos_sin_swapped else (angle.cos(), angle.sin())
    m = -1.0 if minus else 1.0
    if pairs == "half":
        a, b = x[..., : d // 2], x[..., d // 2:]
        rotated = torch.cat([m * b, a], dim=-1)
    else:
        a, b = x[..., 0::2], x[..., 1::2]
        rotated = torch.stack([m * b, a], dim=-1).flatten(-2)
    return x * cos + sign * rotated * sin


def _variant(**knobs):
    return lambda x, positions, layout="half", base=10000.0: rope(x, positions, layout, base, **knobs)


def _interleaved_out_as_halves(x, positions, layout="half", base=10000.0):
    """Reads the interleaved pairs right, writes them back as halves (stack on dim=-2, or cat)."""
    y = rope(x, positions, layout, base)
    return torch.cat([y[..., 0::2], y[..., 1::2]], -1) if layout == "interleaved" else y


def _other_layout(x, positions, layout="half", base=10000.0):
    return rope(x, positions, layout, base, pairs={"half": "interleaved", "interleaved": "half"}[layout])


MISTAKES = [
    Mistake("other layout", _other_layout,
            "your output pairs the other layout's coordinates: layout='half' pairs x[..., i] with x[..., i + d_k/2] "
            "(rotate_half), layout='interleaved' pairs x[..., 2i] with x[..., 2i+1]"),
    Mistake("every frequency 1", _variant(exponent="zero"),
            "every pair rotates by the same angle, the position itself: the exponent 2i/d_k came out 0 "
            "(torch.arange(0, d_k, 2) // d_k is integer division); divide in floating point"),
    Mistake("exponent i/d_k", _variant(exponent="i"),
            "your frequencies are base^(-i/d_k): the exponent is 2i/d_k (torch.arange(0, d_k, 2) / d_k), "
            "so the d_k/2 frequencies run from 1 down to about 1/base"),
    Mistake("a frequency per column", _variant(exponent="column"),
            "your output uses d_k frequencies, base^(-c/d_k) for every column c: there are d_k/2 frequencies, "
            "one per PAIR, and both coordinates of a pair are rotated by the same angle"),
    Mistake("frequency order of the other layout", lambda x, p, layout="half", base=10000.0: rope(
        x, p, layout, base, order={"half": "interleaved", "interleaved": "half"}[layout]),
            "your rotation pairs the right coordinates but lays the frequencies out for the other layout: with "
            "layout='half' the cos/sin table is cat([freqs, freqs]) (column c uses frequency c mod d_k/2), with "
            "layout='interleaved' it is freqs.repeat_interleave(2) (column c uses frequency c // 2)"),
    Mistake("rotation reversed", _variant(sign=-1.0),
            "your output equals a rotation by MINUS the angle: (a, b) -> (a cos - b sin, a sin + b cos); "
            "check the sign of sin (rotate_half(x) is cat([-x2, x1]))"),
    Mistake("cos and sin swapped", _variant(cos_sin_swapped=True),
            "your output equals x·sin + rotate(x)·cos: cos multiplies x itself, sin the rotated copy"),
    Mistake("positions ignored", _variant(ignore_positions=True),
            "your output uses positions 0..T-1 instead of the given positions: rotate row t by positions[t] "
            "(in a decode step after 7 cached tokens the new row is at position 7, not 0)"),
]


# ----------------------------------------------------------------------------- checks


def _call(kit, x, positions, layout, base, what):
    """The user's apply_rope on these arguments; a tensor shaped and typed like x, or Fail."""
    value = kit.user((x, positions, layout, base))
    if not isinstance(value, torch.Tensor) or value.shape != x.shape or value.dtype != x.dtype:
        got = describe(value)
        if isinstance(value, torch.Tensor):
            got = t("{got} of dtype {dtype}", got=got, dtype=value.dtype)
        raise Fail(t("{what} should be a {dtype} tensor of shape (B, H, T, d_k) = {shape}, got {got}", what=what,
                     dtype=x.dtype, shape=tuple(x.shape), got=got))
    return value


@check("structure", "apply_rope is a function taking (x, positions, layout, base)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["x", "positions", "layout", "base"])


@check("properties", "relative positions: shifting every query and key position by 13 leaves each score q·k unchanged")
def relative(kit):
    for layout, base in (("half", 10000.0), ("interleaved", 300.0)):
        g = torch.Generator().manual_seed(41 if layout == "half" else 43)
        q = torch.randn(2, 3, 5, 6, generator=g, dtype=torch.float64)
        k = torch.randn(2, 3, 7, 6, generator=g, dtype=torch.float64)
        pos_q, pos_k = torch.arange(2, 7), torch.arange(7)
        scores = []
        for shift in (0, 13):
            rq = _call(kit, q, pos_q + shift, layout, base, "apply_rope(q)")
            rk = _call(kit, k, pos_k + shift, layout, base, "apply_rope(k)")
            scores.append(rq @ rk.transpose(-2, -1))  # (2, 3, 5, 6) x (2, 3, 6, 7) -> (2, 3, 5, 7)
        try:
            compare(scores[1], scores[0], t("scores after the shift"), tol=kit.tolerance("float64"))
        except Fail as fail:
            raise Fail(t("layout={layout}: {fail}. With every position moved by 13 the score of query m and key n "
                         "must stay the same, since it depends only on m - n: rotate each pair by an angle proportional "
                         "to the position, the same frequency for both coordinates of a pair", layout=repr(layout),
                         fail=fail)) from None


@check("properties", "rotation keeps the length of every vector")
def norms(kit):
    for c in CASES:
        x, positions, layout, base = inputs(c, "float64")
        out = _call(kit, x, positions, layout, base, "output")
        try:
            compare(out.norm(dim=-1), x.norm(dim=-1), t("the length |x| of each row"), tol=kit.tolerance("float64"))
        except Fail as fail:
            raise Fail(t("{label}: {fail}. A rotation changes no length: each pair (a, b) must become "
                         "(a cos - b sin, a sin + b cos) with the same angle in both lines", label=c.label,
                         fail=fail)) from None


@check("properties", "position 0 leaves x unchanged")
def identity_at_zero(kit):
    for c in CASES[:2]:
        x, _, layout, base = inputs(c, "float64")
        out = _call(kit, x, torch.zeros(c.T, dtype=torch.int64), layout, base, "output")
        try:
            compare(out, x, "apply_rope(x, positions=zeros)", tol=kit.tolerance("float64"))
        except Fail as fail:
            raise Fail(t("{label}: {fail}. At position 0 every angle is 0, cos = 1, sin = 0: x must come back "
                         "unchanged", label=c.label, fail=fail)) from None


@check("properties", "positions are absolute: one row rotated alone equals the same row of the whole sequence")
def one_row_alone(kit):
    c = CASES[0]
    x, positions, layout, base = inputs(c, "float64")
    whole = _call(kit, x, positions, layout, base, "output")
    for row in (0, c.T - 1):
        alone = _call(kit, x[:, :, row: row + 1], positions[row: row + 1], layout, base, t("output of one row"))
        try:
            compare(alone, whole[:, :, row: row + 1], t("the row at position {pos} rotated alone",
                                                         pos=int(positions[row])))
        except Fail as fail:
            raise Fail(t("{label}: {fail}. A decode step passes one new row with positions=[{pos}]: use the given "
                         "positions, not torch.arange(T)", label=c.label, fail=fail, pos=int(positions[row]))) from None


@check("properties", "an unknown layout ('complex') raises ValueError")
def unknown_layout(kit):
    x, positions, _, base = inputs(CASES[1], "float64")
    expect_raises([("rope(x, positions, layout='complex')", lambda: kit.user((x, positions, "complex", base)))],
                  t("a typo must not pick a layout silently: 'half' and 'interleaved' pair other coordinates"))