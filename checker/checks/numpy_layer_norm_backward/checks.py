"""Hidden checks: the backward pass of layer normalization in NumPy (dx, dgamma, dbeta)."""

import numpy as np
import torch
import torch.nn.functional as F

from checker.checks.shared.outputs import split
from checker.lang import t
from checker.kit import Fail, Mistake, UserError, case, check, compare, expect_structure, unused_argument

_TRACK = "numpy"
TARGET = "layer_norm_backward"
BATCH_INDEPENDENT = True  # dx of one vector depends on that vector only
OUTPUTS = [("dx", "(..., D)"), ("dgamma", "(D,)"), ("dbeta", "(D,)")]

# Every dimension its own size, and every rank from 1 to 4, so a sum over a fixed set of axes
# (axis=0, axis=(0, 1)) leaves dgamma with the wrong shape somewhere. Case 3 holds a constant
# vector (variance 0) and one with a large mean; case 4 passes eps=0.01 on vectors of variance
# ~0.02, so an eps that is ignored or added outside the square root shows.
CASES = [
    case(1, B=2, T=5, D=8),
    case(2, N=6, D=7),
    case(3, B=3, H=2, T=4, D=6, rows="x[0, 0, 0] constant 2.5, x[1, 1, 2] mean 500"),
    case(4, N=5, D=9, eps=0.01, rows="variance about 0.02"),
    case(5, D=10),
]
TIMING = case(6, B=16, T=128, D=64)


def _lead(c) -> tuple:
    return tuple(v for k, v in c.dims.items() if k != "D")


def inputs(c, dtype):
    g = c.generator()
    x = torch.randn(*_lead(c), c.D, generator=g, dtype=torch.float64) * 1.5 + 0.3
    gamma = torch.randn(c.D, generator=g, dtype=torch.float64)  # random, so dx without gamma shows
    dy = torch.randn(*_lead(c), c.D, generator=g, dtype=torch.float64)
    if c.id == 3:
        x[0, 0, 0] = 2.5  # variance exactly 0
        x[1, 1, 2] = 500.0 + 20.0 * torch.randn(c.D, generator=g, dtype=torch.float64)
    if c.id == 4:
        x = x * 0.1  # variance ~0.02, same order as eps
    args = tuple(a.numpy().astype(dtype) for a in (dy, x, gamma))
    return args + ((c.eps,) if "eps" in c.extra else ())


def autograd(dy, x, gamma, eps=1e-5):
    """(dx, dgamma, dbeta) from torch autograd through F.layer_norm: an independent answer."""
    xt = torch.from_numpy(np.array(x)).requires_grad_(True)
    gt = torch.from_numpy(np.array(gamma)).requires_grad_(True)
    bt = torch.zeros_like(gt, requires_grad=True)
    y = F.layer_norm(xt, (x.shape[-1],), gt, bt, eps)
    (y * torch.from_numpy(np.array(dy))).sum().backward()
    return tuple(t.grad.numpy() for t in (xt, gt, bt))


# ----------------------------------------------------------------------------- named mistakes


def backward(dy, x, gamma, eps=1e-5, *, ddof=0, eps_outside=False, terms="both", var_sign=-1.0, use_gamma=True,
             dgamma_of="x_hat", reduce="sum", swap=False, stat_axis=-1, upcast=False, scale_rstd=True,
             var_term_sum=False, dbeta_of="dy", var_gamma=True):
    """Layer-norm backward with knobs; every knob at its default gives the right answer."""
    if upcast:
        dy, x, gamma = (a.astype(np.float64) for a in (dy, x, gamma))
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).sum(axis=-1, keepdims=True) / (x.shape[-1] - ddof)
    with np.errstate(divide="ignore", invalid="ignore"):
        rstd = 1.0 / (np.sqrt(var) + eps) if eps_outside else 1.0 / np.sqrt(var + eps)
    x_hat = (x - mean) * rstd
    lead = tuple(range(x.ndim - 1))
    total = np.sum if reduce == "sum" else np.mean
    dgamma = total(dy * {"x_hat": x_hat, "x": x, "centred": x - mean}[dgamma_of], axis=lead)
    dbeta = total(dy if dbeta_of == "dy" else dy * x_hat, axis=lead)
    if swap:
        dgamma, dbeta = dbeta, dgamma
    g = dy * gamma if use_gamma else dy
    mean_term = g.mean(axis=stat_axis, keepdims=True)
    var_term = x_hat * (((g if var_gamma else dy) * x_hat).sum if var_term_sum else ((g if var_gamma else dy) * x_hat).mean)(axis=stat_axis, keepdims=True)
    dx = (rstd if scale_rstd else 1.0) * (g - (mean_term if terms in ("both", "mean") else 0) + var_sign * (var_term if terms in ("both", "var") else 0))
    return dx, dgamma, dbeta


def _variant(default_eps=1e-5, **knobs):
    return lambda dy, x, gamma, eps=default_eps: backward(dy, x, gamma, eps, **knobs)


_FORMULA = "dx = rstd · (g − mean(g) − x_hat · mean(g · x_hat)), g = dy · gamma, means over the last axis"

MISTAKES = [
    Mistake("variance term dropped", _variant(terms="mean"),
            "your dx equals rstd · (g − mean(g)): the path through the variance is missing; subtract "
            f"x_hat · mean(g · x_hat) too: {_FORMULA}"),
    Mistake("unbiased variance", _variant(ddof=1),
            "your gradients use the unbiased variance (divide by D − 1, ddof=1): layer norm's forward divides by D"),
    Mistake("eps outside the square root", _variant(eps_outside=True),
            "your gradients use 1 / (std + eps): eps goes inside the square root, rstd = 1 / np.sqrt(var + eps)"),
    Mistake("default eps 1e-6", _variant(default_eps=1e-6),
            "your default eps is 1e-6 (the numpy/layer_norm kata's): this kata's default is nn.LayerNorm's, eps=1e-5"),
    Mistake("averaged over the batch", _variant(reduce="mean"),
            "your dgamma and dbeta are averaged over the leading axes: every vector adds its own contribution to the "
            "shared gamma and beta, so SUM over every leading axis"),
    Mistake("variance term summed", _variant(var_term_sum=True),
            f"your variance term is x_hat · SUM(g · x_hat), D times too large: it is the mean over the last axis; {_FORMULA}"),
    Mistake("dgamma from x - mean", _variant(dgamma_of="centred"),
            "your dgamma sums dy · (x - mean): gamma multiplies the NORMALISED x, so dgamma = sum(dy · x_hat)"),
    Mistake("dgamma and dbeta swapped", _variant(swap=True),
            "your dgamma and dbeta are swapped: return (dx, dgamma, dbeta), dgamma = sum(dy · x_hat), dbeta = sum(dy)"),
    Mistake("float64 out for float32 in", _variant(upcast=True),
            "your values are right but float32 inputs give float64 gradients: keep x's dtype (no .astype(np.float64), "
            "no NumPy float64 scalar such as np.float64(eps) in the arithmetic)"),
]




def _triple(value, label):
    return split(value, label, ("dx", "dgamma", "dbeta"), np.ndarray)


def _compare_all(kit, args, got, expected, label):
    try:
        for (name, legend), u, e in zip(OUTPUTS, got, expected):
            compare(u, e, name, legend)
    except Fail as fail:
        found = kit.name_mistake(args, got)
        raise Fail(t("{label}: {fail}", label=label, fail=fail.message), found or fail.diagnosis) from None


# ----------------------------------------------------------------------------- checks


@check("structure", "layer_norm_backward is a function taking (dy, x, gamma, eps)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["dy", "x", "gamma", "eps"])


@check("shapes", "dgamma and dbeta are (D,) for inputs of rank 1 to 4: summed over every leading axis")
def shared_parameters(kit):
    for c in sorted(CASES, key=lambda c: len(c.dims) if len(c.dims) > 1 else 9):  # ranks 2, 3, 4, then 1
        args = kit.inputs(c)
        try:
            dx, dgamma, dbeta = _triple(kit.user(args, case=c), c.label)
        except UserError as err:
            if err.not_implemented:
                raise
            raise Fail(t("{label}, {rank}-D input: your code raised {err}. x may have any number of leading axes, even "
                         "none: reduce over axis=tuple(range(x.ndim - 1)), or reshape to (-1, D) and sum over axis 0; "
                         "statistics over the last axis keep it (keepdims=True)", label=c.label, rank=args[1].ndim,
                         err=err)) from None
        for name, value in (("dgamma", dgamma), ("dbeta", dbeta)):
            if value.shape != (c.D,):
                raise Fail(t("{label}, {rank}-D input: {name} should have shape (D,) = {want}, got {got}",
                             label=c.label, rank=args[1].ndim, name=name, want=(c.D,), got=value.shape),
                           t("gamma and beta are shared by every vector, so sum over EVERY leading axis "
                             "(axis=tuple(range(x.ndim - 1)), or reshape to (-1, D) and sum over axis 0)"))
        if dx.shape != args[1].shape:
            raise Fail(t("{label}: dx should have x's shape (..., D) = {want}, got {got}", label=c.label,
                         want=args[1].shape, got=dx.shape))


@check("numerics", "float32 in gives float32 dx, dgamma and dbeta")
def keeps_float32(kit):
    for c in CASES[:2]:
        got = _triple(kit.user(kit.inputs(c, "float32"), case=c, dtype="float32"), c.label)
        wide = [name for (name, _), value in zip(OUTPUTS, got) if value.dtype != np.float32]
        if wide:
            names = [n for n, _ in OUTPUTS]
            gave = t(" and ").join(t("a {dtype} {name}", dtype=got[names.index(n)].dtype, name=n) for n in wide)
            raise Fail(t("{label}: float32 inputs gave {gave}", label=c.label, gave=gave),
                       t("your arithmetic widens float32 to float64: keep x's dtype, no .astype(np.float64), and no "
                         "NumPy float64 scalar in the arithmetic (np.float64(D), np.sqrt(eps) of a Python float...): "
                         "since NumPy 2 it turns float32 arrays into float64. Python floats and ints (x.shape[-1], 1.0, "
                         "eps) keep float32"))


@check("gradients", "dx, dgamma and dbeta equal torch autograd's through F.layer_norm, on every case")
def against_autograd(kit):
    for c in CASES:
        args = kit.inputs(c)
        got = _triple(kit.user(args, case=c), c.label)
        _compare_all(kit, args, got, autograd(*args), t("{label}, compared with autograd", label=c.label))


@check("gradients", "dy one-hot at one entry: dx is that entry's row of the Jacobian, every entry of the vector moves")
def one_hot(kit):
    # A single nonzero dy[0, j]: dx[0] is row j of d y / d x. Dropping the mean or variance terms leaves
    # only dx[0, j] nonzero, while the true row couples every entry of the vector.
    c = CASES[1]
    _, x, gamma = kit.inputs(c)
    dy = np.zeros_like(x)
    dy[0, 3] = 1.0
    got = _triple(kit.user((dy, x, gamma), case=c), c.label)
    _compare_all(kit, (dy, x, gamma), got, autograd(dy, x, gamma),
                 t("{label}, dy = 1 at [0, 3] and 0 elsewhere", label=c.label))


@check("numerics", "a constant vector (variance 0) gives finite gradients, not NaN")
def constant_row(kit):
    c = CASES[2]
    dx = _triple(kit.user(kit.inputs(c), case=c), c.label)[0]
    row = dx[0, 0, 0] if dx.ndim == 4 else dx
    if not np.all(np.isfinite(row)):
        raise Fail(t("{label}: x[0, 0, 0] = [2.5, 2.5, ...] has variance 0 and its dx came out {row}...: keep eps "
                     "inside the square root, rstd = 1 / np.sqrt(var + eps), so a zero variance gives "
                     "rstd = 1 / sqrt(eps), and x_hat = 0", label=c.label, row=row[:3].tolist()))


@check("numerics", "the default eps is 1e-5 (nn.LayerNorm's) and the eps argument is used")
def default_eps(kit):
    g = torch.Generator().manual_seed(41)
    x = (torch.randn(3, 4, 6, generator=g, dtype=torch.float64) * 0.003).numpy()  # var ~1e-5: eps matters
    gamma, dy = (torch.randn(*s, generator=g, dtype=torch.float64).numpy() for s in ((6,), (3, 4, 6)))
    ignored = unused_argument(kit, "eps", (({"args": (dy, x, gamma, 1e-3)}, "1e-3"), ({"args": (dy, x, gamma, 1e-5)}, "1e-5"),
                                           ({"args": (dy, x, gamma, 10.0)}, "10")))
    if ignored:
        raise ignored
    for args, what in (((dy, x, gamma), "called without eps"), ((dy, x, gamma, 1e-3), "eps=1e-3")):
        got = _triple(kit.user(args), t(what))
        _compare_all(kit, args, got, autograd(*args), t("x of variance ~1e-5, {what}", what=t(what)))


@check("properties", "every vector of dx sums to 0 (adding a constant to a vector leaves y unchanged)")
def rows_sum_to_zero(kit):
    for c in CASES:
        args = kit.inputs(c)
        dx = _triple(kit.user(args, case=c), c.label)[0]
        sums = dx.sum(axis=-1)
        scale = np.abs(dx).max(axis=-1) + 1.0
        worst = np.unravel_index(np.argmax(np.abs(sums) / scale), sums.shape) if sums.ndim else ()
        if not np.isfinite(sums).all() or abs(sums[worst]) > 1e-9 * scale[worst]:
            found = kit.name_mistake(args, _triple(kit.user(args, case=c), c.label))
            raise Fail(t("{label}: dx[{index}] sums to {total:.3g} over the last axis, not 0: y is unchanged when the "
                         "same number is added to every entry of x's vector, so the gradient has no component along "
                         "(1, 1, ..., 1); the − mean(g) term removes it", label=c.label,
                         index=', '.join(map(str, worst)), total=float(sums[worst])), found)


@check("properties", "adding 10⁶ to every input leaves the gradients unchanged (variance computed stably)")
def shift_invariance(kit):
    # Values on a 2^-16 grid: x + 1e6 is exact, so a two-pass variance moves by ~1e-10 while
    # mean(x²) − mean² loses ~1e-4 to cancellation.
    c = CASES[0]
    dy, x, gamma = kit.inputs(c)
    x = np.round(x * 2**16) / 2**16
    plain = _triple(kit.user((dy, x, gamma)), c.label)
    shifted = _triple(kit.user((dy, x + 1e6, gamma)), c.label)
    try:
        for (name, legend), s, p in zip(OUTPUTS, shifted, plain):
            compare(s, p, t("{name} for x + 1e6", name=name), legend, tol=(1e-6, 1e-6))
    except Fail as fail:
        raise Fail(t("{label}: compared with your own gradients for x: {fail}. Subtract the mean before squaring: "
                     "var = mean((x − mean)²); mean(x²) − mean² cancels catastrophically when the mean is large",
                     label=c.label, fail=fail)) from None
