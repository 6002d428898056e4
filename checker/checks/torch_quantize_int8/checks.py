"""Hidden checks: symmetric absmax int8 per output channel, dequantisation and the int8 matmul (LLM.int8())."""

import torch

from checker.kit import Fail, Mistake, UserError, case, check, compare, dtype_diagnosis, expect_structure
from checker.lang import t

TARGET = "quantize_int8"
OUTPUTS = [("q", "(N, K)"), ("scale", "(N, 1)")]
GRADIENTS = False  # q is int8 and round() has no useful gradient

# Every dimension its own size. Rows as a model's weights are (0.02·randn, so every absmax is below 1), with one
# outlier feature per row (what LLM.int8() is about), wider on the negative side (so |min| > max), and a case of
# exact ties: each row's absmax is 127, so scale = 1 exactly and W / scale lands on k + 0.5 where the rounding
# rule decides (ties on the positive side only: half up and half away from zero agree there, half to even does not).
CASES = [
    case(1, N=6, K=10, rows="weights: 0.02·randn"),
    case(2, N=5, K=16, rows="ties: absmax 127, values k + 0.5"),
    case(3, N=7, K=9, rows="randn with one outlier per row"),
    case(4, N=3, K=33, rows="uniform in [-3, 1]"),
]
TIMING = case(5, N=1024, K=1024, rows="weights: 0.02·randn")


def _weights(c, g):
    if c.rows.startswith("weights"):
        return 0.02 * torch.randn(c.N, c.K, generator=g, dtype=torch.float64)
    if c.rows.startswith("ties"):
        base = torch.randint(-120, 121, (c.N, c.K), generator=g).to(torch.float64)
        half = (torch.rand(c.N, c.K, generator=g) < 0.5) & (base >= 0)
        W = base + 0.5 * half
        at = torch.randint(0, c.K, (c.N,), generator=g)
        W[torch.arange(c.N), at] = torch.where(torch.arange(c.N) % 2 == 0, 127.0, -127.0).to(torch.float64)
        return W
    if c.rows.startswith("randn"):
        W = torch.randn(c.N, c.K, generator=g, dtype=torch.float64)
        at = torch.randint(0, c.K, (c.N,), generator=g)
        W[torch.arange(c.N), at] = 20.0 * torch.randn(c.N, generator=g, dtype=torch.float64)
        return W
    return 4.0 * torch.rand(c.N, c.K, generator=g, dtype=torch.float64) - 3.0


def inputs(c, dtype):
    return (_weights(c, c.generator(salt=1)).to(getattr(torch, dtype)),)


# int8_matmul: T tokens, K features, N channels; int8 values over the whole range (a row of ±127 too, where int8
# and int16 sums overflow first) and positive scales of a model's size.
_MATMUL_CASES = [
    case(11, T=4, K=24, N=5),
    case(12, T=7, K=64, N=3),
    case(13, T=1, K=130, N=6),
]
# dequantize_int8: q over the whole range, scales of a model's size.
_DEQUANT_CASES = [case(21, N=6, K=11), case(22, N=3, K=40)]


def _int8(shape, g):
    return torch.randint(-127, 128, shape, generator=g).to(torch.int8)


def _scales(rows, g, dtype):
    return (0.001 + 0.02 * torch.rand(rows, 1, generator=g, dtype=torch.float64)).to(getattr(torch, dtype))


def _matmul_inputs(c, dtype):
    g = c.generator(salt=2)
    qx, qw = _int8((c.T, c.K), g), _int8((c.N, c.K), g)
    qx[0], qw[-1] = 127, -127  # the largest sums there are: K · 127 · 127 in magnitude
    return qx, _scales(c.T, g, dtype), qw, _scales(c.N, g, dtype)


def _dequant_inputs(c, dtype):
    g = c.generator(salt=3)
    return _int8((c.N, c.K), g), _scales(c.N, g, dtype)


# ----------------------------------------------------------------------------- named mistakes
# Two the error model cannot write: each needs more than one change to the reference's code.


def _ties_up(W):
    absmax = W.abs().amax(dim=1, keepdim=True)
    scale = torch.where(absmax > 0, absmax / 127, torch.ones_like(absmax))
    return torch.floor(W / scale + 0.5).to(torch.int8), scale


def _int8_accumulation(qx, sx, qw, sw):
    return (qx @ qw.T) * (sx * sw.T)


MISTAKES = [
    # round half up: the error model swaps round for floor, but not for floor(x + 0.5), two changes at once
    Mistake("ties rounded up", _ties_up,
            "your rounding sends a tie k + 0.5 up (floor(x + 0.5), or half away from zero, as C's round()): "
            "torch.round rounds half to even (2.5 -> 2, 3.5 -> 4), as bitsandbytes and NumPy do, so that ties do not "
            "bias every quantised weight the same way"),
    # int8 arithmetic: the error model has no rewrite that drops a dtype conversion (.to(torch.int32))
    Mistake("accumulated in int8", _int8_accumulation,
            "your products are summed in int8 (qx @ qw.T on int8 tensors), which wraps around past 127: one "
            "product alone reaches 127 · 127 = 16129. Widen first, qx.to(torch.int32) @ qw.to(torch.int32).T, as "
            "int8 GEMM kernels accumulate in int32"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "quantize_int8(W), dequantize_int8(q, scale) and int8_matmul(qx, sx, qw, sw) are functions")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["W"])
    expect_structure(kit, "dequantize_int8", module=False, params=["q", "scale"])
    expect_structure(kit, "int8_matmul", module=False, params=["qx", "sx", "qw", "sw"])


def _judged(kit, args, got, want, what, legend, target, dtype):
    """compare, and on a difference the named mistake or the error model's change, on these inputs."""
    try:
        compare(got, want, what, legend)
    except Fail as fail:
        found = None
        if isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(want.shape) and got.dtype == want.dtype:
            found = kit.name_mistake(args, got, tol=kit.tolerance(dtype), target=target)
        elif fail.general and isinstance(got, torch.Tensor):
            found = dtype_diagnosis(got, want)
        raise Fail(fail.message, found) from None


@check("numerics", "dequantize_int8: q · scale, row by row, in scale's dtype (float64 and float32)")
def dequantize(kit):
    for dtype in ("float64", "float32"):
        for c in _DEQUANT_CASES:
            args = _dequant_inputs(c, dtype)
            got = kit.user(args, target="dequantize_int8")
            want = kit.reference(args, target="dequantize_int8")
            try:
                _judged(kit, args, got, want, "dequantized W", "(N, K)", "dequantize_int8", dtype)
            except Fail as fail:
                raise Fail(t("{label}, {dtype}: {fail}", label=c.label, dtype=dtype, fail=fail.message),
                           fail.diagnosis) from None


@check("numerics", "int8_matmul: int8 products summed in int32, times both scales (float64 and float32)")
def matmul(kit):
    for dtype in ("float64", "float32"):
        for c in _MATMUL_CASES:
            args = _matmul_inputs(c, dtype)
            got = kit.user(args, target="int8_matmul")
            want = kit.reference(args, target="int8_matmul")
            try:
                _judged(kit, args, got, want, "int8_matmul's output", "(T, N)", "int8_matmul", dtype)
            except Fail as fail:
                raise Fail(t("{label}, {dtype}: {fail}", label=c.label, dtype=dtype, fail=fail.message),
                           fail.diagnosis) from None


@check("numerics", "a row of zeros gets q = 0 and a finite positive scale, no NaN, and dequantises to 0")
def zero_rows(kit):
    c = CASES[0]
    (W,) = inputs(c, "float64")
    W[1] = 0.0
    W[-1] = 0.0
    got = kit.user((W,))
    if not isinstance(got, (tuple, list)) or len(got) != 2 or not all(isinstance(v, torch.Tensor) for v in got):
        return  # the shapes check reports it
    q, scale = got
    if tuple(q.shape) != (c.N, c.K) or tuple(scale.shape) != (c.N, 1):
        return  # the shapes check reports it
    bad = [n for n in (1, c.N - 1) if not bool(torch.isfinite(scale[n]).all()) or not bool((scale[n] > 0).all())
           or bool((q[n] != 0).any())]
    if bad:
        n = bad[0]
        want = kit.reference((W,))
        found = kit.name_mistake((W,), tuple(got), tol=kit.tolerance("float64"), outputs=OUTPUTS) \
            if q.dtype == want[0].dtype and scale.dtype == want[1].dtype else None
        raise Fail(t("{label}, rows 1 and {last} all zero: row {row} got scale {scale} and q {q}", label=c.label,
                     last=c.N - 1, row=n, scale=scale[n].tolist(), q=q[n].tolist()[:6]),
                   found or t("a row of zeros has absmax 0, so absmax / 127 is 0 and W / scale is 0 / 0 = NaN (which "
                              "int8 cannot hold): give such a row scale 1 (torch.where(absmax > 0, absmax / 127, 1)), "
                              "or clamp absmax to a tiny positive value first"))
    try:
        back = kit.user((q, scale), target="dequantize_int8")
    except UserError:
        return  # the dequantize check reports it
    if isinstance(back, torch.Tensor) and tuple(back.shape) == (c.N, c.K) and not bool((back[1] == 0).all()):
        raise Fail(t("{label}: row 1 of W is all zero, but dequantize_int8(q, scale) gives {row}", label=c.label,
                     row=back[1].tolist()[:6]))


@check("properties", "dequantize_int8(*quantize_int8(W)) is within half a step of W (|W - q·scale| <= scale / 2)")
def round_trip(kit):
    for c in (CASES[0], CASES[2]):
        (W,) = inputs(c, "float64")
        got = kit.user((W,))
        if not isinstance(got, (tuple, list)) or len(got) != 2 or not all(isinstance(v, torch.Tensor) for v in got):
            return  # the shapes check reports it
        back = kit.user(tuple(got), target="dequantize_int8")
        if not isinstance(back, torch.Tensor) or back.shape != W.shape or got[1].shape != (c.N, 1):
            return  # the shapes checks report it
        err = (W - back).abs() - got[1].to(W.dtype) / 2
        if bool((err > 1e-12).any()):
            n, k = divmod(int(err.argmax()), c.K)
            raise Fail(t("{label}: W[{n}, {k}] = {w:.6g} comes back as {back:.6g}, more than half a step ({half:.6g}) "
                         "away", label=c.label, n=n, k=k, w=W[n, k].item(), back=back[n, k].item(),
                         half=got[1][n, 0].item() / 2),
                       t("round to the NEAREST level: q = round(W / scale), and back W ≈ q · scale; a truncation, a "
                         "floor or a scale that is not absmax / 127 puts a weight further than half a step away"))


@check("hygiene", "dequantize_int8 and int8_matmul leave the caller's tensors unchanged")
def hygiene_others(kit):
    for target, args in (("dequantize_int8", _dequant_inputs(_DEQUANT_CASES[0], "float64")),
                         ("int8_matmul", _matmul_inputs(_MATMUL_CASES[0], "float64"))):
        _, after = kit.user(args, target=target, return_args=True)
        for i, (before, now) in enumerate(zip(args, after)):
            try:
                compare(now, before, t("argument {number}", number=i + 1), exact=True)
            except Fail as fail:
                raise Fail(t("{target} modified its input ({fail})", target=target, fail=fail.message),
                           t("an in-place operation (x += ..., masked_fill_, x[...] = ...) writes into the caller's "
                             "tensor: compute a new one instead (x = x + ..., masked_fill)")) from None
