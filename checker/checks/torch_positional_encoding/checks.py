"""Hidden checks: PyTorch sinusoidal positional encoding."""

import math

import torch
from torch import nn

from checker.kit import Fail, Mistake, UserError, at_line, case, check, compare, expect_structure, shape_relation
from checker.lang import t

TARGET = "PositionalEncoding"
OUTPUTS = [("output", "(B, T, D)")]
DROPOUT = True  # the constructor takes dropout: check it acts in training only
# The table is what this kata tests: the user's module computes its own `pe`, never ours.
LOAD_STATE = False
DEVICE = True  # a table or positions built in forward must follow x's device

# Tolerances. Every seed builds the table in float32, so the angle pos·ω carries a few float32
# ulps of rounding: about pos × 2e-8, i.e. 1e-6 at position 50 and at most ~4e-6 for the
# positions used here (all below 64; half an ulp of 64 is 3.8e-6). atol 5e-5 accepts every
# correct float32 construction (exp/log, pow, a Python loop) with 10x headroom, and a table
# computed in float64 as well; every real mistake (sin/cos swapped, positions from 1, a wrong
# exponent) moves some value by more than 1e-2.
TOLERANCES = {"float64": (1e-9, 5e-5), "float32": (1e-5, 5e-5)}

# Every dimension its own size, so a swapped or broadcast axis cannot pass by coincidence.
CASES = [
    case(1, B=2, T=5, D=8, max_len=11),
    case(2, B=3, T=6, D=7, max_len=9),  # odd d_model
    case(3, B=2, T=9, D=12, max_len=5000),  # the default table size
    case(4, B=4, T=30, D=13, max_len=41),  # odd again, more positions and frequencies
]
TIMING = case(5, B=16, T=200, D=64, max_len=256)
# forward(zeros(1, max_len, D)) returns the whole table.
_TABLES = [
    case(11, B=1, T=48, D=10, max_len=48, x="zeros"),
    case(12, B=1, T=40, D=9, max_len=40, x="zeros"),
]


def init(c):
    return {"d_model": c.D, "max_len": c.max_len, "dropout": 0.0}


def inputs(c, dtype):
    dt = getattr(torch, dtype)
    if c.extra.get("x") == "zeros":
        return (torch.zeros(c.B, c.T, c.D, dtype=dt),)
    return (torch.randn(c.B, c.T, c.D, generator=c.generator(), dtype=torch.float64).to(dt),)


def exact_table(max_len: int, d_model: int) -> torch.Tensor:
    """The table in float64, written independently of the reference: (1, max_len, D)."""
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)  # (max_len, 1)
    col = torch.arange(d_model)
    angle = pos / 10000.0 ** ((col - col % 2).double() / d_model)  # column 2i and 2i+1 share 2i
    return torch.where(col % 2 == 0, angle.sin(), angle.cos()).unsqueeze(0)


# ----------------------------------------------------------------------------- named mistakes


def table(max_len, d_model, *, swap=False, start=0, exponent="2i", multiply=False, pad_odd=False, layout="interleaved",
          cos_shift=0):
    """The table as the seeds build it (float32, exp of a log); every knob at its default is right."""
    width = d_model + 1 if pad_odd and d_model % 2 else d_model
    pos = torch.arange(start, start + max_len, dtype=torch.float32).unsqueeze(1)  # (max_len, 1)
    col = torch.arange(width)
    e = {"2i": col - col % 2, "i": col // 2, "column": col}[exponent].float()
    sign = 1.0 if multiply else -1.0
    angle = pos * torch.exp(e * (sign * math.log(10000.0) / width))  # (max_len, width)
    even = (col % 2 == 0) != swap
    if cos_shift:  # the cos columns take the angle of the next pair
        angle = torch.where(even, angle, torch.cat([angle[:, 2:], angle[:, -1:].expand(-1, 2)], 1)[:, :width])
    pe = torch.where(even, angle.sin(), angle.cos())[:, :d_model]
    if layout == "halves":  # sin of every pair first, then cos of every pair
        pe = torch.cat([pe[:, 0::2], pe[:, 1::2]], 1)
    return pe.unsqueeze(0)


def _variant(*, table_only=False, scale_x=False, **knobs):
    class Wrong(nn.Module):
        def __init__(self, d_model, max_len=5000, dropout=0.0):
            super().__init__()
            self.register_buffer("pe", table(max_len, d_model, **knobs))

        def forward(self, x):
            pe = self.pe[:, : x.size(1)].to(x.dtype)
            if table_only:
                return pe.expand_as(x)
            return (x * math.sqrt(x.size(-1)) if scale_x else x) + pe

    return Wrong


MISTAKES = [
    Mistake("sin and cos swapped", _variant(swap=True),
            "your table has cos in the even columns and sin in the odd ones: PE[pos, 2i] = sin, "
            "PE[pos, 2i+1] = cos, so row 0 reads 0, 1, 0, 1, ..."),
    Mistake("positions from 1", _variant(start=1),
            "your table starts at position 1: positions run 0, 1, ..., max_len - 1 (torch.arange(max_len)), "
            "so row 0 reads 0, 1, 0, 1, ..."),
    Mistake("exponent i/d_model", _variant(exponent="i"),
            "your frequencies are 1/10000^(i/d_model) with i the pair index: the exponent is 2i/d_model, "
            "the even column index over d_model (torch.arange(0, d_model, 2))"),
    Mistake("exponent per column", _variant(exponent="column"),
            "your cos columns use the exponent (2i+1)/d_model: both columns of a pair share the frequency "
            "1/10000^(2i/d_model); take the exponents from torch.arange(0, d_model, 2), not torch.arange(d_model)"),
    Mistake("frequency multiplied", _variant(multiply=True),
            "your angles are pos × 10000^(2i/d_model): divide, pos / 10000^(2i/d_model) "
            "(in the exp form: exp(2i × -ln(10000) / d_model), mind the minus sign)"),
    Mistake("odd d_model padded", _variant(pad_odd=True),
            "for an odd d_model your table is the one for d_model + 1 with its last column cut off: "
            "the exponent divides by d_model itself, 2i/d_model; use the first d_model // 2 frequencies "
            "for the cos columns"),
    Mistake("sin half, cos half", _variant(layout="halves"),
            "your table puts every sin in the first half of the columns and every cos in the second (the "
            "tensor2tensor layout): this kata interleaves them, PE[pos, 2i] = sin and PE[pos, 2i+1] = cos "
            "(pe[:, 0::2] = sin, pe[:, 1::2] = cos)"),
    Mistake("cos frequencies shifted", _variant(cos_shift=1),
            "your cos columns use the frequency of the NEXT pair (angle[:, 1:] for an odd d_model): the cos in "
            "column 2i+1 shares the frequency of the sin in column 2i; take angle[:, : d_model // 2]"),
    Mistake("table only", _variant(table_only=True),
            "your output is the table alone: the encoding is added to the input, return x + pe[:, :T]"),
    Mistake("x scaled", _variant(scale_x=True),
            "your output equals x·√d_model + pe: the √d_model scale belongs to the embedding layer "
            "(paper section 3.4); this module only adds the table"),
]
_TABLE_ONLY = next(m for m in MISTAKES if m.name == "table only")


# A relation that needs no named mistake: a table whose every column is sin or cos of pos·ω, with ω = 10000^(-e/D)
# and e linear in the column, its parity and a constant (e = 2i is the paper's; i, the column, 2·2i, or 2i from
# another base are slips). ω is read off each column, the exponents fitted on the columns whose ω is well measured,
# and the fit kept only if it rebuilds the user's whole table. So an exponent nobody listed is named as the
# exponent it is, and never as something else.
_WELL_MEASURED = 1.0  # ω·(max_len - 1) below one radian: too little of the wave to measure ω from
_CONDITIONED = 0.2  # an angle is read from sin where |cos| exceeds this (from cos where |sin| does)
_REBUILT = 1e-4  # float32 tables rebuilt from the fitted exponents: a few float32 ulps of the angle
_READINGS = (  # (e of column col in a table of width D, the slip that gives it)
    (lambda col, D: 2 * (col - col % 2), lambda: t("2·2i: 2 * i where i already is the even column index, "
                                                   "from range(0, d_model, 2) or torch.arange(0, d_model, 2)")),
    (lambda col, D: 2 * col, lambda: t("2·column: 2 * i with i the column index")),
    (lambda col, D: col, lambda: t("the column index: one exponent per column, not one per pair")),
    (lambda col, D: col // 2, lambda: t("i, the pair index: the 2 of 2i/d_model is missing")),
)


def _column_frequency(values: torch.Tensor, sine: bool) -> float | None:
    """ω such that values[p] = sin(p·ω) (sine) or cos(p·ω): read at p = 1 (ω ≤ π/2 there), then refined at each
    later position where the angle is well conditioned; None where p = 1 gives no frequency in range."""
    v = values.double().clamp(-1.0, 1.0)
    omega = float(torch.asin(v[1]) if sine else torch.acos(v[1]))
    if omega < 0:
        return None
    for p in range(2, len(v)):
        base = float(torch.asin(v[p]) if sine else torch.acos(v[p]))
        branches = (base, math.pi - base) if sine else (base, -base)
        turn = round((p * omega - base) / (2 * math.pi))
        angle = min((b + 2 * math.pi * k for b in branches for k in (turn - 1, turn, turn + 1)),
                    key=lambda a: abs(a - p * omega))
        if (abs(math.cos(angle)) if sine else abs(math.sin(angle))) > _CONDITIONED:
            omega = angle / p
    return omega


def _table_exponents(pe: torch.Tensor) -> list | None:
    """e (times d_model) of every column, when the table (max_len, D) is sin (even columns) and cos (odd) of
    pos / 10000^(e/D) with e linear in the column, its parity and a constant; None when no such table rebuilds it."""
    L, D = pe.shape
    omegas = [_column_frequency(pe[:, j], j % 2 == 0) for j in range(D)]
    if L < 3 or any(o is None for o in omegas):
        return None
    usable = [j for j in range(D) if omegas[j] * (L - 1) >= _WELL_MEASURED]
    if len(usable) < 2:
        return None
    X = torch.tensor([[float(j), float(j % 2), 1.0] for j in usable], dtype=torch.float64)
    y = torch.tensor([[-math.log(omegas[j])] for j in usable], dtype=torch.float64)
    # gelsd: the least-norm solution where the usable columns leave a coefficient undetermined (all even, say)
    slope, odd, offset = torch.linalg.lstsq(X, y, driver="gelsd").solution.reshape(-1).tolist()
    col = torch.arange(D)
    e = slope * col + odd * (col % 2) + offset  # natural-log exponents: ω = exp(-e)
    angle = torch.arange(L, dtype=torch.float64)[:, None] * torch.exp(-e.double())
    rebuilt = torch.where(col % 2 == 0, angle.sin(), angle.cos())
    if not torch.allclose(rebuilt, pe.double(), rtol=0, atol=_REBUILT):
        return None
    return [float(v) * D / math.log(10000.0) for v in e]


def _exponent_diagnosis(pe: torch.Tensor) -> str | None:
    """The sentence for a table whose exponents are not 2i, read off the table itself."""
    got = _table_exponents(pe)
    D = pe.shape[-1]
    want = [float(j - j % 2) for j in range(D)]
    if got is None or all(math.isclose(g, w, abs_tol=1e-3) for g, w in zip(got, want)):
        return None
    reading = next((what() for f, what in _READINGS if all(math.isclose(g, f(j, D), abs_tol=1e-3)
                                                          for j, g in enumerate(got))), None)
    ratio = got[2] / want[2] if D > 2 and want[2] else None
    if reading is None and ratio and all(math.isclose(g, ratio * w, rel_tol=1e-3, abs_tol=1e-3)
                                         for g, w in zip(got, want)):
        reading = t("2i, as from the base {base:.6g} instead of 10000", base=10000.0 ** ratio)
    shown = lambda values: ", ".join(f"{v:.4g}" for v in values[:8]) + (", ..." if D > 8 else "")  # noqa: E731
    got, want = shown([0.0 if abs(g) < 5e-4 else g for g in got]), shown(want)
    if reading:
        return t("your table is sin and cos of pos / 10000^(e/d_model) with the exponent e = {got} in columns 0, 1, 2, "
                 "..., that is {reading}: the paper's e is 2i for both columns of pair i, {want}; build it from "
                 "torch.arange(0, d_model, 2) / d_model", got=got, want=want, reading=reading)
    return t("your table is sin and cos of pos / 10000^(e/d_model) with the exponent e = {got} in columns 0, 1, 2, ...: "
             "the paper's e is 2i for both columns of pair i, {want}; build it from torch.arange(0, d_model, 2) / "
             "d_model", got=got, want=want)


# ----------------------------------------------------------------------------- checks


def _call(kit, args, **kw):
    """kit.user, but an exception from the user's code (not a stub) is returned, not raised."""
    try:
        return kit.user(args, **kw), None
    except UserError as err:
        if err.not_implemented:
            raise
        return None, str(err) + at_line(err)


@check("structure", "PositionalEncoding is an nn.Module whose table is the buffer pe (1, max_len, d_model)")
def structure(kit):
    c = CASES[0]
    expect_structure(kit, TARGET, module=True, params=["d_model", "max_len", "dropout"], forward=["x"])
    info = kit.inspect(TARGET, init(c))
    want = [1, c.max_len, c.D]
    if "pe" in info["parameters"]:
        raise Fail(t("pe is an nn.Parameter, so an optimizer would train it"),
                   t("the sinusoidal table is fixed: store it with self.register_buffer('pe', table), not as an "
                     "nn.Parameter"))
    if "pe" not in info["buffers"]:
        found = t(" (it has: {names})", names=", ".join(info["buffers"])) if info["buffers"] else ""
        raise Fail(t("PositionalEncoding({D}, max_len={max_len}) has no buffer named pe{found}", D=c.D,
                     max_len=c.max_len, found=found),
                   t("store the table with self.register_buffer('pe', table): a plain attribute is neither moved by "
                     ".to() nor saved in state_dict"))
    if info["buffers"]["pe"] != want:
        raise Fail(t("PositionalEncoding(d_model={D}, max_len={max_len}).pe should have shape (1, max_len, d_model) "
                     "= {want}, got {got}{hint}", D=c.D, max_len=c.max_len, want=tuple(want),
                     got=tuple(info["buffers"]["pe"]),
                     hint=t(": add the batch axis with .unsqueeze(0)") if info["buffers"]["pe"] == want[1:] else ""),
                   shape_relation(tuple(info["buffers"]["pe"]), tuple(want), "(1, max_len, d_model)"), general=True)
    if info["parameters"]:
        raise Fail(t("PositionalEncoding has parameters the contract does not have: {names}; the sinusoidal "
                     "encoding learns nothing", names=", ".join(info["parameters"])))


@check("shapes", "forward(x) with T < max_len returns x's shape (B, T, D)")
def slices_to_T(kit):
    c = CASES[0]
    out, error = _call(kit, kit.inputs(c), case=c)
    if error:
        full = torch.zeros(c.B, c.max_len, c.D, dtype=torch.float64)
        _, error_full = _call(kit, (full,), case=c)
        if error_full:
            raise Fail(t("{label}: your code raised {error}", label=c.label, error=error))
        raise Fail(t("{label}: your code works when T == max_len but raised {error} for T = {T} < max_len = {max_len}",
                     label=c.label, error=error, T=c.T, max_len=c.max_len),
                   t("your code adds the whole table, or slices its batch axis: add only the first T rows, "
                     "self.pe[:, :x.size(1)] (pe[:T] slices the batch axis of the (1, max_len, D) buffer)"))
    if isinstance(out, torch.Tensor) and tuple(out.shape) == (1, c.T, c.D):
        raise Fail(t("{label}: output has shape {got}, the table's slice (1, T, D), not x's (B, T, D) = {want}",
                     label=c.label, got=tuple(out.shape), want=(c.B, c.T, c.D)), t(_TABLE_ONLY.explain))


@check("shapes", "an odd d_model builds the table and gives (B, T, D)")
def odd_d_model(kit):
    c = CASES[1]
    out, error = _call(kit, kit.inputs(c), case=c)
    if error and _call(kit, kit.inputs(CASES[0]), case=CASES[0])[1]:
        raise Fail(t("{label}: your code raised {error}, and an even d_model fails as well", label=c.label,
                     error=error))
    if error:
        raise Fail(t("{label}: with an odd d_model your code raised {error}", label=c.label, error=error),
                   t("an odd d_model = {D} has {sin} sin columns (0, 2, ..., {last_sin}) and {cos} cos columns "
                     "(1, 3, ..., {last_cos}): fill the cos columns with the first d_model // 2 frequencies, "
                     "cos(position * div_term[: d_model // 2]) (the PyTorch notebook tutorial)", D=c.D, sin=(c.D + 1) // 2,
                     last_sin=c.D - 1, cos=c.D // 2, last_cos=c.D - 2))
    compare(out, torch.zeros(c.B, c.T, c.D, dtype=torch.float64), t("{label}: output", label=c.label), "(B, T, D)",
            tol=(0.0, math.inf))  # shape, kind and dtype only: the values are checked below


@check("numerics", "the table: forward(zeros) gives PE[pos, 2i] = sin(pos / 10000^(2i/D)), PE[pos, 2i+1] = cos(...)")
def the_table(kit):
    for c in _TABLES:
        got = kit.user(kit.inputs(c), case=c)
        want = exact_table(c.max_len, c.D)
        try:
            compare(got, want, t("forward(zeros), which is the table pe"), "(1, max_len, D)",
                    tol=kit.tolerance("float64"))
        except Fail as fail:
            message = t("{label}: {fail}", label=c.label, fail=fail)
            if isinstance(got, torch.Tensor) and got.shape == want.shape and got.dtype == want.dtype:
                diff = (got - want).abs().nan_to_num(nan=math.inf)[0]
                pos, col = divmod(int(diff.argmax()), c.D)
                kind = "sin" if col % 2 == 0 else "cos"
                message = t("{label}: {fail} (position {pos}, column {col}, a {kind} column with 2i = {two_i}: expected "
                            "{kind}({pos} / 10000^({two_i}/{D})) = {value:.6g})", label=c.label, fail=fail, pos=pos,
                            col=col, kind=kind, two_i=col - col % 2, D=c.D, value=want[0, pos, col].item())
            found = kit.diagnose(c, "float64", (got,))
            if found is None and isinstance(got, torch.Tensor) and got.shape == want.shape:
                found = _exponent_diagnosis(got[0])
            raise Fail(message, found) from None


@check("numerics", "a module left in float32 returns float32 for a float32 x")
def keeps_dtype(kit):
    c = CASES[0]
    x = kit.inputs(c, "float32")[0]
    got = kit.user((x,), init=init(c), dtype=None)  # no .to(): the module keeps the dtype it was built with
    want = kit.reference((x,), case=c, dtype="float32")
    try:
        compare(got, want, "output", "(B, T, D)", tol=kit.tolerance("float32"))
    except Fail as fail:
        hint = (t("your output does not keep x's dtype: keep the table in the default dtype (float32) or cast it "
                  "with .to(x.dtype) before adding")
                if isinstance(got, torch.Tensor) and got.dtype != want.dtype else None)
        raise Fail(t("{label}, module not moved with .to(): {fail}", label=c.label, fail=fail), hint) from None


@check("properties", "dropout acts on the sum: in training each output is 0 or (x + pe) / (1 - p)")
def dropout_on_the_sum(kit):
    # The kept elements are compared with the user's own output without dropout, so that a wrong table (already
    # reported by the numerics checks) is not read as a dropout mistake.
    c = CASES[0]
    x = kit.inputs(c)[0]
    clean = kit.user((x,), init=init(c), dtype="float64")
    trained = kit.user((x,), init={**init(c), "dropout": 0.5}, dtype="float64", train=True)
    compare(trained, kit.reference((x,), case=c), t("{label}, dropout=0.5 in training mode: output", label=c.label),
            "(B, T, D)", tol=(0.0, math.inf))
    if not isinstance(clean, torch.Tensor) or clean.shape != trained.shape or clean.dtype != trained.dtype:
        return  # the shapes and numerics checks say what is wrong without dropout
    dropped = trained == 0
    if not dropped.any():
        raise Fail(t("{label}: with dropout=0.5 in training mode no element of the output is zero", label=c.label),
                   t("no dropout acts on the output: apply self.dropout to the sum, dropout(x + pe[:, :T]) "
                     "(dropping only the table leaves x whole)"))
    try:
        compare(trained[~dropped], 2 * clean[~dropped], t("the elements dropout kept"), tol=kit.tolerance("float64"))
    except Fail as fail:
        raise Fail(t("{label}, dropout=0.5 in training mode: {fail}; the kept elements should be your output without "
                     "dropout divided by (1 - p), 2(x + pe)", label=c.label, fail=fail),
                   t("the elements your dropout keeps are not (x + pe) / (1 - p): apply self.dropout to the sum x + pe, "
                     "once (dropping x or the table alone, or twice, breaks this)")) from None
