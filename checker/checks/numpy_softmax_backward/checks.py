"""Hidden checks: NumPy backward pass of softmax, dx = y * (dy - sum(dy * y, axis))."""

import numpy as np
import torch

from checker.lang import t
from checker.kit import (Fail, Mistake, UserError, case, check, compare, crash_diagnosis, expect_structure,
                         loses_an_axis, matches)

TARGET = "softmax_backward"
OUTPUTS = [("dx", "(same as y)")]

# Every dimension its own size, so a sum over the wrong axis cannot pass by coincidence; axis 0
# and 1 of a 3-D array catch code that always uses the last axis; rank 1 to 4.
CASES = [
    case(1, B=2, T_q=3, T_k=5, axis="-1"),
    case(2, d0=4, d1=3, d2=6, axis="0"),
    case(3, d0=2, d1=5, d2=3, axis="1"),
    case(4, B=2, H=3, T_q=4, T_k=5, axis="-1"),
    case(5, V=6, axis="-1"),
]
TIMING = case(6, B=8, H=4, T_q=64, T_k=48, axis="-1")


def _softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _arrays(shape, axis, g, dtype, scale=2.0) -> tuple:
    """(x, dy, y): logits randn * scale, a random upstream gradient, y = softmax(x) in float64, then dtype."""
    x = torch.randn(shape, generator=g, dtype=torch.float64).numpy() * scale
    dy = torch.randn(shape, generator=g, dtype=torch.float64).numpy()
    return x, dy.astype(dtype), _softmax(x, axis).astype(dtype)


def inputs(c, dtype):
    _, dy, y = _arrays(tuple(c.dims.values()), int(c.axis), c.generator(), dtype)
    return dy, y, int(c.axis)


def autograd(x, dy, axis) -> np.ndarray:
    """dL/dx from torch autograd of torch.softmax(x, axis), as NumPy: an answer independent of the reference."""
    xt = torch.from_numpy(np.array(x)).requires_grad_(True)
    torch.softmax(xt, dim=axis).backward(torch.from_numpy(np.array(dy)))
    return xt.grad.numpy()


# ----------------------------------------------------------------------------- named mistakes


def _dot(dy, y, axis):
    return np.sum(dy * y, axis=axis, keepdims=True)


def _diagonal_only(dy, y, axis=-1):
    return y * (1 - y) * dy


def _exp_only(dy, y, axis=-1):
    return y * dy


def _no_leading_y(dy, y, axis=-1):
    return dy - _dot(dy, y, axis)


def _sum_of_dy(dy, y, axis=-1):
    return y * (dy - np.sum(dy, axis=axis, keepdims=True))


def _dy_y_swapped(dy, y, axis=-1):
    return dy * (y - _dot(dy, y, axis))


def _y_squared(dy, y, axis=-1):
    return y * (dy - np.sum(y * y, axis=axis, keepdims=True))


def _log_softmax_backward(dy, y, axis=-1):
    return dy - y * np.sum(dy, axis=axis, keepdims=True)


def _sign_flipped(dy, y, axis=-1):
    return y * (_dot(dy, y, axis) - dy)


def _axis_ignored(dy, y, axis=-1):
    return y * (dy - _dot(dy, y, -1))


def _no_keepdims(dy, y, axis=-1):
    return y * (dy - np.sum(dy * y, axis=axis))


def _global_sum(dy, y, axis=-1):
    return y * (dy - np.sum(dy * y))


def _mean(dy, y, axis=-1):
    return y * (dy - np.mean(dy * y, axis=axis, keepdims=True))


def _softmax_again(dy, y, axis=-1):
    s = _softmax(y, axis)
    return s * (dy - _dot(dy, s, axis))


def _float64(dy, y, axis=-1):
    y64 = y.astype(np.float64)
    return y64 * (dy - _dot(dy, y64, axis))


_KEEPDIMS = ("without keepdims=True the sum loses its axis, so it broadcasts against the wrong axis (or raises "
            "'operands could not be broadcast'): np.sum(dy * y, axis=axis, keepdims=True)")

MISTAKES = [
    Mistake("float64 out for float32 in", _float64,
            "your values are right but float32 inputs give a float64 dx: keep y's dtype (no .astype(np.float64), "
            "no float64 array in the arithmetic)"),
    Mistake("diagonal-only Jacobian", _diagonal_only,
            "your dx equals y * (1 - y) * dy, the DIAGONAL of the Jacobian only: softmax's output i depends on "
            "every logit j (dy_i/dx_j = y_i (δ_ij - y_j)), so dx_i = y_i (dy_i - Σ_j dy_j y_j); "
            "dx = y * (dy - np.sum(dy * y, axis=axis, keepdims=True))"),
    Mistake("mean instead of weighted sum", _mean,
            "your dx equals y * (dy - mean(dy * y)): the term is the SUM Σ_j dy_j y_j, not its mean; "
            "np.sum(dy * y, axis=axis, keepdims=True)"),
    Mistake("dy and y swapped", _dy_y_swapped,
            "your dx is dy * (y - sum(dy * y)): dy and y trade places; dx = y * (dy - sum(dy * y, axis))"),
    Mistake("log-softmax's backward", _log_softmax_backward,
            "your dx is dy - y * sum(dy), the backward of LOG-softmax: for y = softmax(x) it is "
            "y * (dy - sum(dy * y, axis))"),
    Mistake("sum without keepdims", _no_keepdims, f"you subtract np.sum(dy * y, axis=axis); {_KEEPDIMS}"),
    Mistake("sum over the whole array", _global_sum,
            "your dx subtracts np.sum(dy * y) over the WHOLE array: each slice along `axis` has its own sum, "
            "np.sum(dy * y, axis=axis, keepdims=True)"),
    Mistake("softmax applied to y again", _softmax_again,
            "your dx is the softmax gradient at softmax(y): y is already the softmax OUTPUT, use it as it is "
            "(dx = y * (dy - np.sum(dy * y, axis=axis, keepdims=True)))"),
]




def _call(kit, args, what):
    try:
        return kit.user(args)
    except UserError as err:
        if err.not_implemented or "broadcast" not in err.text:
            raise
        # the sum without keepdims where the shapes say so; any other broadcast is said as the kit says it
        raise Fail(t("{what}: your code raised {err}", what=what, err=err),
                   t(_KEEPDIMS) if loses_an_axis(err) else crash_diagnosis(err)) from None


def _verify(kit, args, what, expected=None, tol=None):
    """Call the user's function on args, compare with expected (default: the reference); name the mistake."""
    got = _call(kit, args, what)
    expected = kit.reference(args) if expected is None else expected
    try:
        compare(got, expected, "dx", "(same as y)", tol=tol)
    except Fail as fail:
        found = kit.name_mistake(args, got, tol=kit.tolerance(str(got.dtype))) if isinstance(got, np.ndarray) else None
        raise Fail(t("{what}: {fail}", what=what, fail=fail.message), found or fail.diagnosis) from None
    return got


# ----------------------------------------------------------------------------- checks


@check("structure", "softmax_backward is a function softmax_backward(dy, y, axis)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["dy", "y", "axis"])


@check("shapes", "the sum keeps its axis (keepdims=True), so it broadcasts back")
def keepdims(kit):
    # On (3, 5) a dropped axis raises; on a square (4, 4) it silently subtracts row j's sum from row i.
    g = torch.Generator().manual_seed(21)
    for shape, axis in (((3, 5), -1), ((4, 4), -1), ((4, 4), 0)):
        _, dy, y = _arrays(shape, axis, g, "float64")
        _verify(kit, (dy, y, axis), t("y of shape {shape}, axis={axis}", shape=shape, axis=axis))


@check("numerics", "softmax_backward(dy, y) with no axis uses the last axis")
def default_axis(kit):
    _, dy, y = _arrays((3, 4, 5), -1, torch.Generator().manual_seed(22), "float64")
    got, expected = _call(kit, (dy, y), "softmax_backward(dy, y)"), kit.reference((dy, y))
    try:
        compare(got, expected, "softmax_backward(dy, y)", "(same as y)")
    except Fail as fail:
        if matches(_call(kit, (dy, y, -1), "softmax_backward(dy, y, -1)"), expected):
            raise Fail(t("{fail}, while axis=-1 passed explicitly is right: the default is axis=-1 "
                         "(def softmax_backward(dy, y, axis=-1))", fail=fail)) from None
        found = kit.name_mistake((dy, y), got, tol=kit.tolerance(str(got.dtype))) if isinstance(got, np.ndarray) else None
        raise Fail(fail.message, found or fail.diagnosis) from None


@check("gradients", "dx equals torch autograd through torch.softmax on every case")
def against_autograd(kit):
    for c in CASES:
        x, dy, y = _arrays(tuple(c.dims.values()), int(c.axis), c.generator(), "float64")
        _verify(kit, (dy, y, int(c.axis)), c.label, autograd(x, dy, int(c.axis)))


@check("numerics", "a saturated softmax (entries exactly 0 and 1) gives finite gradients, 0 where y is 0")
def saturated(kit):
    # Logits of size 1e3: most entries of y underflow to exactly 0 and the largest is exactly 1.
    # Code that recovers the logits with np.log(y), or divides by y, turns them into inf and NaN.
    g = torch.Generator().manual_seed(23)
    for dtype in ("float64", "float32"):
        x, dy, y = _arrays((3, 4, 6), -1, g, dtype, scale=1e3)
        got = _call(kit, (dy, y, -1), t("{dtype}, logits of size 1e3", dtype=dtype))
        if isinstance(got, np.ndarray) and got.shape == y.shape:
            bad = ~np.isfinite(got) | ((y == 0) & (got != 0))
            if bad.any():
                at = tuple(int(i) for i in np.argwhere(bad)[0])
                raise Fail(t("{dtype}, logits of size 1e3 (y has exact 0s and 1s): dx{at} is {got} where y is {y}; "
                             "dx = y * (dy - np.sum(dy * y, ...)) needs no log and no division, and is exactly 0 "
                             "wherever y is 0", dtype=dtype, at=list(at), got=got[at], y=y[at]))
        _verify(kit, (dy, y, -1), t("{dtype}, logits of size 1e3", dtype=dtype),
                autograd(x, dy.astype(np.float64), -1).astype(dtype))


@check("properties", "every slice of dx along the axis sums to 0 (softmax's outputs always sum to 1)")
def sums_to_zero(kit):
    for c in CASES:
        dy, y, axis = inputs(c, "float64")
        got = kit.user((dy, y, axis))
        if not (isinstance(got, np.ndarray) and got.shape == y.shape):
            continue  # the shapes checks report it
        sums = np.sum(got, axis=axis)
        worst = float(np.ravel(sums)[np.nanargmax(np.abs(np.ravel(sums)))]) if np.isfinite(sums).any() else float("nan")
        if not abs(worst) <= 1e-9:
            found = kit.name_mistake((dy, y, axis), got, tol=kit.tolerance(str(got.dtype)))
            raise Fail(t("{label}: the slices of dx along axis {axis} should sum to 0 (moving every logit of a slice by "
                         "the same amount leaves softmax unchanged, so the gradient has no component along it), one "
                         "sums to {worst:.6g}", label=c.label, axis=axis, worst=worst), found)


@check("properties", "adding a constant to dy along the axis leaves dx unchanged")
def shift_invariant(kit):
    c = CASES[1]
    dy, y, axis = inputs(c, "float64")
    shift = np.random.default_rng(24).standard_normal(np.sum(y, axis=axis, keepdims=True).shape) * 3.0
    plain, shifted = kit.user((dy, y, axis)), kit.user((dy + shift, y, axis))
    if not (isinstance(plain, np.ndarray) and isinstance(shifted, np.ndarray)):
        return  # the shapes checks report it
    try:
        compare(shifted, plain, t("dx for dy + c"), "(same as y)")
    except Fail as fail:
        raise Fail(t("{label}, compared with your own dx for dy: {fail}. A loss that adds c · Σ_j y_j = c to every slice "
                     "does not depend on x, so dy + c must give the same dx: subtract the y-weighted sum of dy, "
                     "dx = y * (dy - np.sum(dy * y, axis=axis, keepdims=True))", label=c.label, fail=fail)) from None
