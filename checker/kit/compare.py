"""The one tensor comparison: tolerances, and what a difference says."""

from __future__ import annotations

import math
import re

import numpy as np
import torch

from checker.lang import Message, t
from checker.sandbox.wire import Opaque
from checker.kit.authoring import Fail


# Tolerances. Two correct implementations differ only in rounding order (matmul vs einsum,
# -inf vs -1e9, fused vs separate ops). In float64 that is ~1e-15 relative; 1e-9 leaves six
# orders of magnitude of headroom, while every real mistake (a missing scale, a swapped axis)
# moves results by more than 1e-3.
RTOL_F64, ATOL_F64 = 1e-9, 1e-10
# In float32 (eps 1.2e-7) sums over a few dozen terms and an exp() lose a few ulps.
RTOL_F32, ATOL_F32 = 1e-4, 1e-5

DTYPES = {"float64": torch.float64, "float32": torch.float32, "bfloat16": torch.bfloat16}
# How PyTorch words an operation that mixes devices (checked with torch 2.x on the meta device).
# ----------------------------------------------------------------------------- comparing

def describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return t("a tensor of shape {shape}", shape=tuple(value.shape))
    if isinstance(value, np.ndarray):
        return t("a NumPy array of shape {shape}", shape=value.shape)
    if isinstance(value, Opaque):
        return t("a {kind} ({value})", kind=value.type, value=value.repr)
    if isinstance(value, (tuple, list)):
        return t("a {kind} of {count} items", kind=type(value).__name__, count=len(value))
    return "None" if value is None else t("a {kind} ({value})", kind=type(value).__name__, value=repr(value))


def dtype_diagnosis(actual, expected) -> str | None:
    """Where a float64-for-float32 (or float32-for-float64) result comes from, by track."""
    want, got = (_dtype_name(x).rsplit(".", 1)[-1] for x in (expected, actual))
    torch_track = isinstance(expected, torch.Tensor)
    if (want, got) == ("float32", "float64"):
        return (t("something made inside is float64 (dtype=torch.float64, .double(), torch.from_numpy) and promotes "
                  "the result: create what you make in the inputs' dtype (dtype=x.dtype)") if torch_track else
                t("something made inside is float64 (np.zeros or np.ones without dtype=, a np.float64 scalar) and "
                  "promotes the result: create what you make in the inputs' dtype (dtype=x.dtype)"))
    if (want, got) == ("float64", "float32"):
        return (t("the result is built in or cast to float32 (torch.zeros(...) without dtype= filled in place, "
                  ".float()): create it in the inputs' dtype (torch.zeros_like(x), x.new_zeros(...))") if torch_track
                else t("the result is cast to or built in float32 (astype(np.float32), dtype=np.float32): keep the "
                       "inputs' dtype"))
    return None


def _mask_diagnosis(actual, expected) -> str | None:
    """A boolean mask asked for and the right pattern returned in another form: 0/1 numbers, or an additive mask."""
    if _dtype_name(expected).rsplit(".", 1)[-1] != "bool" or actual.dtype == expected.dtype:
        return None
    a, e = _as_tensor(actual).double(), _as_tensor(expected)
    if a.numel() == 0 or not bool(((a == 0) | (a == 1) | (a < -1e3)).all()):
        return None
    if bool((a == 1).any()) and not bool((a < -1e3).any()):
        if bool(((a == 1) == e).all()):
            return t("your mask has the right pattern as 1 and 0 numbers ({dtype}, the 2018 Annotated Transformer's "
                     "uint8 masks): the contract asks for a bool tensor, True where a position is kept (== or .bool())",
                     dtype=_dtype_name(actual))
        return None
    if bool(((a == 0) == e).all()):
        return t("yours is an additive mask (0 where a position is kept, a large negative number or -inf where it is "
                 "hidden), as Hugging Face builds them: the contract asks for a bool tensor, True where kept")
    return None


def phrase(text: str) -> str:
    """What a comparison names, or a shape's legend: a name of the code (self_weights) or notation ((B, T, D)) is
    said as it is; words (filtered logits, (same as x)) are a phrase, said in the reader's language (the kata's
    catalogue has them)."""
    if isinstance(text, str) and re.search(r"[A-Za-z]+ [A-Za-z]+", text):
        return t(text)
    return text


def _axes(legend, ndim: int) -> list | None:
    """The axis names of a legend such as (B, H, T_q, T_k), or None where it is not one name per axis."""
    text = legend.strip() if isinstance(legend, str) else ""
    names = [n.strip() for n in text[1:-1].split(",") if n.strip()] if text[:1] + text[-1:] == "()" else []
    return names if len(names) == ndim and all(n.isidentifier() for n in names) else None


def shape_relation(got: tuple, want: tuple, legend="") -> Message | None:
    """What a wrong shape is, where it is the right one changed in one way: axes of size 1 left in, an axis not
    reduced away, an axis reduced away (named by the legend), the axes in another order, or the right number of
    elements viewed in another shape. None for any other shape."""
    names = _axes(legend, len(want))

    def without(shape, i):
        return shape[:i] + shape[i + 1:]

    if len(got) > len(want) and tuple(s for s in got if s != 1) == tuple(s for s in want if s != 1) \
            and got.count(1) > want.count(1):
        return t("yours has the contract's axes and {count} more dimension(s) of size 1 ({got} for {want}): an axis left in "
                 "by keepdim=True, unsqueeze, [:, None] or a gather's index; squeeze it, or reduce without keepdim",
                 count=len(got) - len(want), got=got, want=want)
    if len(got) == len(want) + 1:
        extra = sorted({got[i] for i in range(len(got)) if without(got, i) == want})
        if len(extra) == 1:
            return t("yours has one axis more than the contract, of size {size} ({got} for {want}): an axis your code "
                     "added (unsqueeze, [:, None], or broadcasting against a tensor of more axes), or a sum, mean or "
                     "reshape that would take it away, left out", size=extra[0], got=got, want=want)
    if len(got) == len(want) - 1:
        gone = [i for i in range(len(want)) if without(want, i) == got]
        if gone:
            axis = names[gone[0]] if names and len({names[i] for i in gone}) == 1 else None
            if axis:
                return t("axis {axis} of {legend} is missing from yours ({got}): your code reduced over it (a sum, "
                         "mean or max) or indexed it away; the contract keeps it", axis=axis, legend=legend, got=got)
            return t("yours has one axis fewer than the contract ({got} for {want}): your code reduced over one "
                     "(a sum, mean or max) or indexed it away", got=got, want=want)
    if len(got) == len(want) and sorted(got) == sorted(want):
        order = [want.index(s) for s in got] if len(set(want)) == len(want) else None
        if order and names:
            return t("yours has the contract's axes in another order, ({order}) for {legend}: a transpose, permute or "
                     "moveaxis is missing, or one too many", order=", ".join(names[i] for i in order), legend=legend)
        return t("yours has the contract's sizes in another order ({got} for {want}): a transpose, permute or "
                 "moveaxis is missing, or one too many", got=got, want=want)
    if got and want and math.prod(got) == math.prod(want):
        return t("yours has the right number of elements in another shape ({got} for {want}): a view or reshape to "
                 "the wrong sizes, or one without the transpose before it", got=got, want=want)
    return None


def compare(actual, expected, what: str, legend: str = "", *, exact: bool = False, tol=None) -> None:
    """The one comparison: kind, exact shape (never broadcast), dtype, then values. Raises Fail.

    Values pass when |actual - expected| <= atol + rtol * |expected| everywhere (NaN equals NaN).

    tol=(rtol, atol) overrides the dtype's default tolerance (a kata names its own and says why).
    """
    what, legend = phrase(what), phrase(legend)
    want_kind = torch.Tensor if isinstance(expected, torch.Tensor) else np.ndarray
    if not isinstance(actual, want_kind):
        kind = t("a torch.Tensor") if want_kind is torch.Tensor else t("a NumPy array (np.ndarray)")
        raise Fail(t("{what} should be {kind}, got {got}", what=what, kind=kind, got=describe(actual)))
    if tuple(actual.shape) != tuple(expected.shape):
        shown = legend + f" = {tuple(expected.shape)}" if legend else f"{tuple(expected.shape)}"  # legend: a Message
        raise Fail(t("{what} should have shape {shown}, got {got}", what=what, shown=shown, got=tuple(actual.shape)),
                   shape_relation(tuple(actual.shape), tuple(expected.shape), legend), general=True)
    if actual.dtype != expected.dtype:
        raise Fail(t("{what} should have dtype {want}, got {got}", what=what, want=_dtype_name(expected),
                     got=_dtype_name(actual)), _mask_diagnosis(actual, expected), general=True)
    a, e = _as_tensor(actual), _as_tensor(expected)
    if a.numel() == 0:
        return
    if exact or not a.is_floating_point():
        bad = a != e
        if bad.any():
            raise Fail(t("{what}: {count} of {total} elements differ; first at index {index}: got {got}, expected "
                         "{want}", what=what, count=int(bad.sum()), total=a.numel(), index=_index(bad),
                         **_got_want(a[bad][0], e[bad][0])))
        return
    rtol, atol = tol or ((RTOL_F32, ATOL_F32) if a.dtype == torch.float32 else (RTOL_F64, ATOL_F64))
    # The rule of torch.testing.assert_close, |a - e| <= atol + rtol * |e| with NaN equal to NaN,
    # applied with torch.isclose: assert_close's first call imports torch.distributed and sympy
    # (0.8-2 s), which every cold `kata check` would pay.
    bad = ~torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    if not bad.any():
        return
    nan = torch.isnan(a) & ~torch.isnan(e)
    if nan.any():
        raise Fail(t("{what}: {count} of {total} elements are NaN; first at index {index}", what=what,
                     count=int(nan.sum()), total=a.numel(), index=_index(nan)))
    infinite = bad & (torch.isinf(a) != torch.isinf(e))  # -inf where the reference has a number, or the other way
    if infinite.any():  # (log 0 of a row that sees nothing, a hidden score): said as such, not as a difference of 1e308
        where = _index(infinite)
        raise Fail(t("{what}: {count} of {total} elements differ; at index {index} yours is {got} where the reference's "
                     "is {want}", what=what, count=int(bad.sum()), total=a.numel(), index=where,
                     **_got_want(a[where], e[where])))
    diff = (a - e).abs().nan_to_num(nan=math.inf)
    worst = divmod_index(int(torch.argmax(torch.where(bad, diff, torch.zeros_like(diff)))), a.shape)
    raise Fail(t("{what}: {count} of {total} elements differ; largest difference {diff} at index {index}: got {got}, "
                 "expected {want}", what=what, count=int(bad.sum()), total=a.numel(), diff=_fmt(diff[worst]),
                 index=worst, **_got_want(a[worst], e[worst])))


def matches(actual, expected, tol=None) -> bool:
    """True when compare() would accept actual."""
    try:
        compare(actual, expected, "value", tol=tol)
        return True
    except Fail:
        return False


def _as_tensor(x) -> torch.Tensor:
    return torch.from_numpy(np.asarray(x)) if isinstance(x, np.ndarray) else x


def _dtype_name(x) -> str:
    return str(x.dtype) if isinstance(x, torch.Tensor) else f"numpy.{x.dtype}"


def divmod_index(flat: int, shape) -> tuple:
    out = []
    for size in reversed(tuple(shape)):
        flat, rem = divmod(flat, size)
        out.append(rem)
    return tuple(reversed(out))


def _index(mask: torch.Tensor) -> tuple:
    return divmod_index(int(mask.reshape(-1).nonzero()[0]), mask.shape)


def _fmt(x, digits: int = 6) -> str:
    value = x.item() if hasattr(x, "item") else x
    return f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def _got_want(got, want) -> dict:
    """The two values with as many digits as it takes to tell them apart (6 at least, 17 at most): never
    "got 0.719295, expected 0.719295"."""
    digits = 6
    while digits < 17 and _fmt(got, digits) == _fmt(want, digits):
        digits += 1
    return {"got": _fmt(got, digits), "want": _fmt(want, digits)}


def as_outputs(value, outputs: list[tuple[str, str]]) -> tuple:
    """Split what TARGET returned into the named outputs, or say what is wrong with its form."""
    if len(outputs) == 1:
        return (value,)
    names = ", ".join(name for name, _ in outputs)  # as a tuple is written: (y, self_weights, cross_weights)
    if not isinstance(value, (tuple, list)) or len(value) != len(outputs):
        raise Fail(t("should return a tuple ({names}), got {got}", names=names, got=describe(value)))
    return tuple(value)


def float_tensor(x) -> bool:
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def floating(x) -> bool:
    """A float tensor or a float NumPy array."""
    return float_tensor(x) or (isinstance(x, np.ndarray) and x.dtype.kind == "f")
