"""Hidden checks: NumPy numerically stable softmax."""

import numpy as np
import torch

from checker.lang import t
from checker.kit import Fail, Mistake, UserError, case, check, compare, expect_structure

TARGET = "softmax"
OUTPUTS = [("probabilities", "(same as x)")]

# Logits near 1e3 or 1e4 carry an absolute rounding error of one float32 ulp (6e-5 at 1e3), so exp() of
# them is good to about 1e-4 relative whatever the method: the stability checks allow 1e-3 in float32
# (log-sum-exp implementations round there; every real mistake gives NaN or an error of order 1).
_STABILITY_TOL = {"float64": None, "float32": (1e-3, 1e-6)}


def _named_tol(got):
    return _STABILITY_TOL["float32"] if got.dtype == np.float32 else None


# Every dimension its own size, so normalising along the wrong axis cannot pass by coincidence;
# axis 0 and 1 of a 3-D array catch code that always uses the last axis.
CASES = [
    case(1, B=2, T_q=3, T_k=5, axis="-1"),
    case(2, d0=4, d1=3, d2=6, axis="0"),
    case(3, d0=2, d1=5, d2=3, axis="1"),
    case(4, N=4, V=7, axis="-1"),
    case(5, V=6, axis="-1"),
]
TIMING = case(6, B=16, T_q=64, T_k=48, axis="-1")


def _array(shape, g, dtype, scale=3.0, shift=0.0):
    """Realistic logits: randn * scale + shift, seeded, in dtype."""
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale + shift).numpy().astype(dtype)


def inputs(c, dtype):
    return _array(tuple(c.dims.values()), c.generator(), dtype), int(c.axis)


# ----------------------------------------------------------------------------- named mistakes


def _no_max(x, axis=-1):
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def _global_max(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / np.sum(e, axis=axis, keepdims=True)


def _axis_ignored(x, axis=-1):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def _sum_no_keepdims(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis)


def _max_no_keepdims(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis))
    return e / np.sum(e, axis=axis, keepdims=True)


def _divide_by_max(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.max(e, axis=axis, keepdims=True)


def _no_exp(x, axis=-1):
    return x / np.sum(x, axis=axis, keepdims=True)


def _sum_last_axis(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def _global_sum(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e)


def _log_softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _axis_not_moved_back(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return np.moveaxis(e / np.sum(e, axis=axis, keepdims=True), axis, -1)


def _min_subtracted(x, axis=-1):
    e = np.exp(x - np.min(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


_KEEPDIMS = ("without keepdims=True the reduced axis disappears, so the result broadcasts against the wrong "
            "axis (or raises 'operands could not be broadcast'): pass keepdims=True to np.max and np.sum")

MISTAKES = [
    Mistake("no max subtraction", _no_max,
            "your output equals softmax without subtracting the max: exp of a large logit overflows to inf "
            "(exp(710) in float64, exp(89) in float32) and inf/inf is NaN; subtract np.max(x, axis=axis, "
            "keepdims=True) before np.exp"),
    Mistake("global max", _global_max,
            "your output equals softmax shifted by the max of the WHOLE array (np.max(x)): a slice whose "
            "entries all lie far below it underflows to 0/0 = NaN; subtract each slice's own max, "
            "np.max(x, axis=axis, keepdims=True)"),
    Mistake("sum without keepdims", _sum_no_keepdims, f"you divide by np.sum(e, axis=axis); {_KEEPDIMS}"),
    Mistake("max without keepdims", _max_no_keepdims, f"you subtract np.max(x, axis=axis); {_KEEPDIMS}"),
    Mistake("sum over the last axis", _sum_last_axis,
            "your max follows `axis` but your sum is over the last axis: pass axis=axis to np.sum as well"),
    Mistake("sum over the whole array", _global_sum,
            "you divide by the sum of the WHOLE array (np.sum(e) with no axis): each slice is normalised on its "
            "own, np.sum(e, axis=axis, keepdims=True)"),
    Mistake("log-softmax", _log_softmax,
            "your output is log-softmax, x - max - log(sum(exp(x - max))): return the probabilities themselves, "
            "e / np.sum(e, axis=axis, keepdims=True)"),
    Mistake("min subtracted", _min_subtracted,
            "you subtract the MIN of each slice: exp(x - min) overflows for a wide slice; subtract the max, so "
            "the largest exponent is exp(0) = 1"),
    Mistake("no exp", _no_exp,
            "your output equals x / sum(x), with no exponential: softmax normalises exp(x), which is positive"),
    Mistake("axis not moved back", _axis_not_moved_back,
            "your output is right but `axis` stays moved to the end: after np.moveaxis(x, axis, -1) and normalising "
            "there, move it back with np.moveaxis(result, -1, axis)"),
]




_DTYPE = ("{want} logits come back as {got}: the array is cast somewhere (np.asarray(x, dtype=...), .astype(...)) or "
          "combined with an array or NumPy scalar of another dtype, which promotes it; keep x's own dtype throughout")


def _verify(kit, args, what, tol=None):
    """Call the user's softmax on args and compare with the reference; name the mistake if known."""
    got = kit.user(args)
    expected = kit.reference(args)
    try:
        compare(got, expected, "probabilities", "(same as x)", tol=tol)
    except Fail as fail:
        found = kit.name_mistake(args, got, tol=_named_tol(got)) if isinstance(got, np.ndarray) else None
        if found is None and isinstance(got, np.ndarray) and got.shape == expected.shape and got.dtype != expected.dtype:
            raise Fail(t("{what}: {fail}", what=what, fail=fail),
                       t(_DTYPE, want=expected.dtype.name, got=got.dtype.name), general=True) from None
        raise Fail(t("{what}: {fail}", what=what, fail=fail.message), found or fail.diagnosis) from None
    return got


# ----------------------------------------------------------------------------- checks


@check("structure", "softmax is a function softmax(x, axis)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["x", "axis"])


@check("shapes", "reductions keep their axis (keepdims=True), so they broadcast back")
def keepdims(kit):
    # On a (3, 5) input a dropped axis raises; on a square (4, 4) one it silently divides row i by
    # the sum of row j: the form in which this mistake survives into an interview.
    g = torch.Generator().manual_seed(11)
    for shape, axis in (((3, 5), -1), ((4, 4), -1), ((4, 4), 0)):
        args = (_array(shape, g, "float64"), axis)
        try:
            _verify(kit, args, t("x of shape {shape}, axis={axis}", shape=shape, axis=axis))
        except UserError as err:
            if err.not_implemented or "broadcast" not in err.text:
                raise
            raise Fail(t("x of shape {shape}, axis={axis}: your code raised {err}", shape=shape, axis=axis, err=err),
                       t(_KEEPDIMS)) from None


@check("numerics", "softmax(x) with no axis normalises over the last axis")
def default_axis(kit):
    x = _array((3, 4, 5), torch.Generator().manual_seed(12), "float64")
    got, expected = kit.user((x,)), kit.reference((x,))
    try:
        compare(got, expected, "softmax(x)", "(same as x)")
    except Fail as fail:
        raise Fail(t("{fail}; the default is axis=-1 (def softmax(x, axis=-1))", fail=fail)) from None


@check("numerics", "stability: logits of size 1e4 give no NaN or inf (float64 and float32)")
def large_logits(kit):
    for dtype in ("float64", "float32"):
        x = _array((3, 4, 6), torch.Generator().manual_seed(13), dtype, scale=1e4)
        got = kit.user((x, -1))
        if isinstance(got, np.ndarray) and got.shape == x.shape and not np.isfinite(got).all():
            found = kit.name_mistake((x, -1), got, tol=_named_tol(got))
            bad = tuple(int(i) for i in np.argwhere(~np.isfinite(got))[0])
            raise Fail(t("{dtype}, logits of size 1e4: entry {bad} is {value}. {advice}", dtype=dtype, bad=bad,
                         value=got[bad], advice=found or t("subtract the max of each slice before np.exp: exp(1000) is "
                                                           "inf and inf/inf is NaN")))
        _verify(kit, (x, -1), t("{dtype}, logits of size 1e4", dtype=dtype), _STABILITY_TOL[dtype])


@check("numerics", "stability: slices near -1e4, 0 and +1e3 are each normalised on their own")
def far_apart_slices(kit):
    # Subtracting the GLOBAL max (np.max(x)) instead of each slice's own turns the slice near -1e4
    # into exp(-1e4)/sum(...) = 0/0 = NaN; never subtracting a max overflows the slice near +1e3.
    g = torch.Generator().manual_seed(14)
    rows = np.stack([_array(5, g, "float64"), _array(5, g, "float64", shift=-1e4), _array(5, g, "float64", shift=1e3)])
    for x, axis, where in ((rows, -1, "row"), (np.ascontiguousarray(rows.T), 0, "column")):
        for dtype in ("float64", "float32"):
            args = (x.astype(dtype), axis)
            got = kit.user(args)
            if isinstance(got, np.ndarray) and got.shape == x.shape and np.isnan(got).any():
                found = kit.name_mistake(args, got, tol=_named_tol(got))
                nan_slices = sorted({int(i) for i in np.argwhere(np.isnan(got))[:, 0 if axis == -1 else 1]})
                means = {0: "0", 1: "-1e4", 2: "+1e3"}
                near = ', '.join(means[i] for i in nan_slices)
                advice = found or t("subtract each slice's own max: np.max(x, axis=axis, keepdims=True)")
                raise Fail(t("{dtype}, axis={axis}: the row(s) of logits near {near} came out NaN. {advice}"
                             if where == "row" else
                             "{dtype}, axis={axis}: the column(s) of logits near {near} came out NaN. {advice}",
                             dtype=dtype, axis=axis, near=near, advice=advice))
            _verify(kit, args, t("{dtype}, rows near 0, -1e4 and +1e3, axis={axis}" if where == "row" else
                                 "{dtype}, columns near 0, -1e4 and +1e3, axis={axis}", dtype=dtype, axis=axis),
                    _STABILITY_TOL[dtype])


@check("properties", "every slice along the axis lies in [0, 1] and sums to 1")
def sums_to_one(kit):
    for c in CASES:
        x, axis = kit.inputs(c)
        got = kit.user((x, axis))
        if not (isinstance(got, np.ndarray) and got.shape == x.shape):
            continue  # the shapes check reports it
        sums = np.sum(got, axis=axis)
        if not np.allclose(sums, 1.0, rtol=0, atol=1e-9) or (got < 0).any() or (got > 1).any():
            found = kit.name_mistake((x, axis), got, tol=_named_tol(got))
            worst = float(np.ravel(sums)[np.nanargmax(np.abs(np.ravel(sums) - 1))]) if np.isfinite(sums).any() else float("nan")
            raise Fail(t("{label}: the slices along axis {axis} should sum to 1, one sums to {worst:.6g}", label=c.label,
                         axis=axis, worst=worst), found)
