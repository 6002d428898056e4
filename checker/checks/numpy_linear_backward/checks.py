"""Hidden checks: NumPy backward pass of a linear layer, y = x @ W + b."""

import re

import numpy as np
import torch

from checker.lang import t
from checker.kit import Fail, Mistake, UserError, at_line, case, check, compare, expect_structure

TARGET = "linear_backward"
OUTPUTS = [("dx", "(..., D_in)"), ("dW", "(D_in, D_out)"), ("db", "(D_out,)")]

# The float32 run's tolerance, named so that it also applies to a float64 result of float32 inputs:
# float32 products summed into a float64 accumulator are float32-accurate, and the diagnosis of that
# mistake compares them with float64 sums. The values are the kit's float32 defaults.
TOLERANCES = {"float32": (1e-4, 1e-5)}

# Every dimension its own size, so a transposed dW or a sum over the wrong axis cannot pass by
# coincidence. Leading axes of rank 2, 1 and 3: case 3's (B, H, T) catches a dW or db summed over
# axis 0 only, which rank-2 leading axes (B, T) let through for db but not for dW.
CASES = [
    case(1, B=2, T=5, D_in=4, D_out=3),
    case(2, N=6, D_in=7, D_out=5),
    case(3, B=2, H=3, T=4, D_in=6, D_out=5),
    case(4, B=3, T=2, D_in=5, D_out=7),
]
TIMING = case(5, B=16, T=64, D_in=96, D_out=80)


def _lead(c) -> tuple:
    return tuple(v for k, v in c.dims.items() if k not in ("D_in", "D_out"))


def _arrays(lead: tuple, d_in: int, d_out: int, g: torch.Generator, dtype: str) -> tuple:
    """(dout, x, W): seeded randn, in dtype."""
    dout = torch.randn(*lead, d_out, generator=g, dtype=torch.float64)
    x = torch.randn(*lead, d_in, generator=g, dtype=torch.float64) * 1.5 + 0.2
    W = torch.randn(d_in, d_out, generator=g, dtype=torch.float64) / d_in**0.5
    return tuple(a.numpy().astype(dtype) for a in (dout, x, W))


def inputs(c, dtype):
    return _arrays(_lead(c), c.D_in, c.D_out, c.generator(), dtype)


def autograd(dout, x, W) -> tuple:
    """(dx, dW, db) from torch autograd of y = x @ W + b (b random: it must not matter), as NumPy."""
    xt, Wt = (torch.from_numpy(np.array(a)).requires_grad_(True) for a in (x, W))
    bt = torch.randn(W.shape[1], dtype=xt.dtype).requires_grad_(True)
    (xt @ Wt + bt).backward(torch.from_numpy(np.array(dout)))
    return xt.grad.numpy(), Wt.grad.numpy(), bt.grad.numpy()


# ----------------------------------------------------------------------------- named mistakes


def _rows(a):
    return a.reshape(-1, a.shape[-1])


def _right(dout, x, W):
    return dout @ W.T, _rows(x).T @ _rows(dout), _rows(dout).sum(axis=0)


def _with(dx=None, dW=None, db=None):
    """The right gradients with some replaced: fn(dout, x, W) -> that gradient."""

    def impl(dout, x, W):
        right = _right(dout, x, W)
        return tuple(right[i] if f is None else f(dout, x, W) for i, f in enumerate((dx, dW, db)))

    return impl


def _last_item(dout, x, W):
    # for b in range(B): dW = x[b].T @ dout[b]   (= instead of +=)
    return _rows(x[-1]).T @ _rows(dout[-1])


def _axis0_only(dout, x, W):
    return np.sum(np.swapaxes(x, -1, -2) @ dout, axis=0)


def _float64(dout, x, W):
    return _right(*(a.astype(np.float64) for a in (dout, x, W)))


def _float64_sums(dout, x, W):
    dx, dW, db = _float64(dout, x, W)
    return dx.astype(x.dtype), dW, db


MISTAKES = [
    Mistake("float64 out for float32 in", _float64,
            "your values are right but float32 inputs give float64 gradients: keep the inputs' dtype (no "
            ".astype(np.float64), no np.zeros(...) without dtype=x.dtype as an accumulator)"),
    Mistake("float64 accumulators", _float64_sums,
            "your dx keeps the dtype but float32 inputs give float64 dW and db: an accumulator made with "
            "np.zeros(shape) is float64; use np.zeros(shape, dtype=x.dtype), or no accumulator at all "
            "(dW = x2.T @ dout2, db = dout2.sum(axis=0))"),
    Mistake("dW transposed", _with(dW=lambda dout, x, W: _rows(dout).T @ _rows(x)),
            "your dW equals dout^T x, of shape (D_out, D_in): dW must have W's shape (D_in, D_out), "
            "dW = x^T dout (x2.T @ dout2 with both flattened to 2-D)"),
    Mistake("dW from the last batch item only", _with(dW=_last_item),
            "your dW equals x[-1]^T dout[-1], the contribution of the LAST batch item only (a loop that "
            "assigns dW = ... instead of accumulating dW += ...): every position used W, so dW sums over all "
            "of them; reshape x and dout to 2-D, dW = x.reshape(-1, D_in).T @ dout.reshape(-1, D_out)"),
    Mistake("dW per batch item, not summed", _with(dW=lambda dout, x, W: np.swapaxes(x, -1, -2) @ dout),
            "your dW is x^T dout for each batch item separately, shape (..., D_in, D_out): W is shared, so sum "
            "over every leading axis; reshape x and dout to 2-D, dW = x.reshape(-1, D_in).T @ dout.reshape(-1, D_out)"),
    Mistake("dW summed over axis 0 only", _with(dW=_axis0_only),
            "your dW is (x^T dout).sum(axis=0), summed over the first leading axis only: right for (B, T, D_in), "
            "wrong for more leading axes; reshape x and dout to 2-D (N, D) so that one matmul sums every position"),
    Mistake("dW averaged", _with(dW=lambda dout, x, W: _rows(x).T @ _rows(dout) / _rows(x).shape[0]),
            "your dW equals x^T dout divided by the number of rows N: the gradient of a sum is a sum, not a "
            "mean (a mean over the batch, if the loss takes one, is already inside dout)"),
    Mistake("db with keepdims", _with(db=lambda dout, x, W: _rows(dout).sum(axis=0, keepdims=True)),
            "your db has shape (1, D_out): sum with keepdims=False, db = dout2.sum(axis=0), the shape of b (D_out,)"),
    Mistake("dx as W @ doutᵀ", _with(dx=lambda dout, x, W: W @ _rows(dout).T),
            "your dx is W @ doutᵀ, (D_in, N): with rows as examples, dx = dout @ Wᵀ, which keeps x's shape (..., D_in)"),
    Mistake("dW returned first", lambda dout, x, W: (lambda r: (r[1], r[0], r[2]))(_right(dout, x, W)),
            "you return (dW, dx, db): the contract's order is (dx, dW, db)"),
    Mistake("db summed over the features", _with(db=lambda dout, x, W: dout.sum(axis=-1)),
            "your db is dout.sum(axis=-1), summed over the OUTPUT features: db has one entry per output feature, "
            "sum over the leading axes instead, db = dout.reshape(-1, D_out).sum(axis=0)"),
    Mistake("dW and db averaged", _with(dW=lambda dout, x, W: _rows(x).T @ _rows(dout) / _rows(x).shape[0],
                                        db=lambda dout, x, W: _rows(dout).mean(axis=0)),
            "your dW and db are MEANS over the N rows (x^T dout / N, dout.mean(axis=0)): the gradient of a sum is "
            "a sum; a mean over the batch, if the loss takes one, is already inside dout"),
    Mistake("db averaged", _with(db=lambda dout, x, W: _rows(dout).mean(axis=0)),
            "your db is the MEAN of dout over the rows: the gradient of a sum is a sum, "
            "db = dout.reshape(-1, D_out).sum(axis=0)"),
]

_SHAPE_GUIDE = ("match the shapes: dx = dout @ W.T is (..., D_out) @ (D_out, D_in); "
               "dW = x2.T @ dout2 is (D_in, N) @ (N, D_out) with x2 = x.reshape(-1, D_in), dout2 = dout.reshape(-1, D_out); "
               "x.T on a 3-D array reverses ALL its axes (use np.swapaxes(x, -1, -2) or flatten to 2-D first)")


def _explain_error(err: UserError, what: str) -> Fail:
    return Fail(t("{what}: your code raised {err}{where}", what=what, err=err, where=at_line(err)), t(_SHAPE_GUIDE))




def _verify(kit, args, what, expected) -> None:
    """Call the user's function on args, compare each gradient with expected; name the mistake if known."""
    try:
        got = kit.user(args)
    except UserError as err:
        if err.not_implemented or not re.search(r"mismatch in its core dimension|not aligned|broadcast together", err.text):
            raise
        raise _explain_error(err, what) from None
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        raise Fail(t("{what}: should return a tuple (dx, dW, db), got {kind}", what=what, kind=type(got).__name__))
    try:
        for (name, legend), u, e in zip(OUTPUTS, got, expected):
            compare(u, e, name, legend)
    except Fail as fail:
        found = kit.name_mistake(args, got)
        raise Fail(t("{what}: {fail}", what=what, fail=fail.message), found or fail.diagnosis) from None


# ----------------------------------------------------------------------------- checks


@check("structure", "linear_backward is a function linear_backward(dout, x, W)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["dout", "x", "W"])


@check("shapes", "the products fit: dx is (..., D_in), dW is (D_in, D_out), db is (D_out,)")
def products_fit(kit):
    c = CASES[0]
    try:
        kit.user(inputs(c, "float64"))
    except UserError as err:
        if err.not_implemented or not re.search(r"mismatch in its core dimension|not aligned|broadcast together", err.text):
            raise
        raise _explain_error(err, c.label) from None


@check("gradients", "dx, dW and db equal torch autograd of y = x @ W + b on every case")
def against_autograd(kit):
    for c in CASES:
        args = inputs(c, "float64")
        _verify(kit, args, c.label, autograd(*args))


@check("properties", "leading axes of any rank: none (x is one vector), then (B, H, T, S)")
def any_rank(kit):
    g = torch.Generator().manual_seed(31)
    for lead, what in (((), "x of shape (D_in,) = (4,), no leading axis: dW = outer(x, dout), db = dout"),
                       ((2, 3, 4, 5), "x of shape (B, H, T, S, D_in) = (2, 3, 4, 5, 6)")):
        args = _arrays(lead, 6 if lead else 4, 7 if lead else 3, g, "float64")
        _verify(kit, args, t(what), autograd(*args))


@check("properties", "dW and db are sums over positions: the batch written twice doubles them")
def sums_not_means(kit):
    c = CASES[1]
    dout, x, W = inputs(c, "float64")
    once = kit.user((dout, x, W))
    twice = kit.user((np.concatenate([dout, dout]), np.concatenate([x, x]), W))
    if not all(isinstance(r, (tuple, list)) and len(r) == 3 and all(isinstance(a, np.ndarray) for a in r)
               for r in (once, twice)):
        return  # the shapes checks report the form
    try:
        compare(twice[0], np.concatenate([once[0], once[0]]), t("dx of the doubled batch"), "(2N, D_in)")
        compare(twice[1], 2 * once[1], t("dW of the doubled batch"), "(D_in, D_out)")
        compare(twice[2], 2 * once[2], t("db of the doubled batch"), "(D_out,)")
    except Fail as fail:
        raise Fail(t("{label}, with x and dout concatenated with themselves, compared with your own gradients for x "
                     "and dout: {fail}. Each position adds its own contribution to dW and db: sum them, do not average; "
                     "and each row of dx depends on its own row of dout only", label=c.label, fail=fail)) from None
