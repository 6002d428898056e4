"""Hidden checks: NumPy Add & Norm, layer_norm(x + sublayer_output), and its layer_norm."""

import numpy as np
import torch

from checker.lang import t
from checker.kit import Fail, Mistake, case, check, compare, expect_structure

TARGET = "add_and_norm"
OUTPUTS = [("output", "(..., D)")]
# The given function add_and_norm calls: when the numbers differ, the first call whose input differs is named.
PARTS = ("layer_norm",)

# Every dimension its own size, rank 3 (the NumPy tutorial's (B, T, D)) and rank 2. In case 3 the row
# [0, 0] of x + sublayer_output is exactly constant (variance 0) while neither x[0, 0] nor
# sublayer_output[0, 0] is: normalising before adding shows, and the row must come out as beta.
# Case 4 has rows of variance about 1e-5, the size of epsilon, so where epsilon goes shows.
CASES = [
    case(1, B=2, T=5, D=8),
    case(2, N=6, D=7),
    case(3, B=3, T=4, D=6, rows="(x + sublayer_output)[0, 0] constant"),
    case(4, B=2, T=3, D=9, rows="variance about 1e-5"),
]


def _lead(c) -> tuple:
    return (c.B, c.T) if "B" in c.dims else (c.N,)


def inputs(c, dtype):
    g = c.generator()

    def randn(*shape, scale=1.0, shift=0.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale + shift

    x = randn(*_lead(c), c.D, scale=1.5, shift=0.3)
    sub = randn(*_lead(c), c.D, scale=0.8, shift=-0.2)  # a different scale and mean from x
    gamma = randn(c.D)  # random, so gamma and beta cannot be swapped unseen
    beta = randn(c.D)
    if c.id == 3:
        ramp = torch.arange(c.D, dtype=torch.float64) * 0.25  # exact binary fractions: the sum is exactly 2.5
        x[0, 0], sub[0, 0] = ramp, 2.5 - ramp
    if c.id == 4:
        x, sub = x * 3e-3, sub * 3e-3
    return tuple(a.numpy().astype(dtype) for a in (x, sub, gamma, beta))


def ln_inputs(c, dtype, epsilon=None):
    """Arguments for layer_norm alone: (x, gamma, beta[, epsilon])."""
    x, sub, gamma, beta = inputs(c, dtype)
    return (x + sub, gamma, beta) + (() if epsilon is None else (epsilon,))


# ----------------------------------------------------------------------------- named mistakes


def norm(x, gamma, beta, epsilon=1e-6, *, ddof=0, eps_outside=False, swap=False):
    """Layer norm with knobs; every knob at its default gives the right answer."""
    if swap:
        gamma, beta = beta, gamma
    mean = x.mean(axis=-1, keepdims=True)
    std = x.std(axis=-1, keepdims=True, ddof=ddof)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_hat = (x - mean) / (std + epsilon) if eps_outside else (x - mean) / np.sqrt(std**2 + epsilon)
    return gamma * x_hat + beta


def _ln(**knobs):
    return lambda x, gamma, beta, epsilon=1e-6: norm(x, gamma, beta, knobs.pop("epsilon", epsilon), **knobs)


def _wiring(how, **knobs):
    """add_and_norm with the right layer norm (or a knobbed one) wired in a given way."""
    ln = lambda a, gamma, beta: norm(a, gamma, beta, **knobs)  # noqa: E731

    def impl(x, s, gamma, beta):
        return {
            "right": lambda: ln(x + s, gamma, beta),
            "norm_then_add": lambda: ln(x, gamma, beta) + s,
            "norm_sublayer_then_add": lambda: x + ln(s, gamma, beta),
            "no_residual": lambda: ln(s, gamma, beta),
            "no_sublayer": lambda: ln(x, gamma, beta),
            "no_norm": lambda: x + s,
            "float64": lambda: ln(x.astype(np.float64) + s.astype(np.float64), gamma.astype(np.float64),
                                  beta.astype(np.float64)),
        }[how]()

    return impl


MISTAKES = [
    Mistake("normalise before adding", _wiring("norm_then_add"),
            "your output equals layer_norm(x) + sublayer_output: you normalise before adding. Add & Norm adds the "
            "residual first and normalises the sum: layer_norm(x + sublayer_output, gamma, beta)"),
    Mistake("normalise the sublayer only", _wiring("norm_sublayer_then_add"),
            "your output equals x + layer_norm(sublayer_output): the residual is added after the norm of the "
            "sublayer only. Normalise the sum: layer_norm(x + sublayer_output, gamma, beta)"),
    Mistake("norm missing", _wiring("no_norm"),
            "your output equals x + sublayer_output: the layer normalization is missing; return "
            "layer_norm(x + sublayer_output, gamma, beta)"),
    Mistake("unbiased variance", _wiring("right", ddof=1),
            "your output equals Add & Norm with the unbiased variance (divide by D - 1, ddof=1): layer norm "
            "divides by D, np.var's default ddof=0"),
    Mistake("epsilon outside the square root", _wiring("right", eps_outside=True),
            "your output equals (a - mean) / (std + epsilon) with a = x + sublayer_output, the paper walkthrough's LayerNorm: "
            "epsilon goes inside the square root, (a - mean) / np.sqrt(var + epsilon)"),
    Mistake("annotated-transformer std", _wiring("right", ddof=1, eps_outside=True),
            "your output equals (a - mean) / (std + epsilon) with the unbiased std (ddof=1), the Annotated "
            "Transformer's LayerNorm: use the biased variance and np.sqrt(var + epsilon)"),
]

_LN_MISTAKES = [
    Mistake("unbiased variance", _ln(ddof=1),
            "your layer_norm uses the unbiased variance (ddof=1): divide by D, np.var's default ddof=0"),
    Mistake("epsilon outside the square root", _ln(eps_outside=True),
            "your layer_norm divides by std + epsilon, the paper walkthrough's version: epsilon goes inside the square root, "
            "np.sqrt(var + epsilon)"),
    Mistake("annotated-transformer std", _ln(ddof=1, eps_outside=True),
            "your layer_norm divides by the unbiased std + epsilon (the Annotated Transformer's): use the biased "
            "variance and np.sqrt(var + epsilon)"),
    Mistake("epsilon argument ignored", lambda x, gamma, beta, epsilon=1e-6: norm(x, gamma, beta),
            "your layer_norm ignores its epsilon argument (it equals epsilon=1e-6 when 0.01 was passed): use the "
            "epsilon parameter"),
    Mistake("gamma and beta swapped", _ln(swap=True),
            "your layer_norm computes beta * x_hat + gamma: y = gamma * x_hat + beta"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "layer_norm(x, gamma, beta, epsilon) and add_and_norm(x, sublayer_output, gamma, beta) are functions")
def structure(kit):
    expect_structure(kit, "layer_norm", module=False, params=["x", "gamma", "beta", "epsilon"])
    expect_structure(kit, TARGET, module=False, params=["x", "sublayer_output", "gamma", "beta"])


@check("numerics", "layer_norm on its own matches the reference, with the default and an explicit epsilon")
def layer_norm_alone(kit):
    for c, epsilon in ((CASES[0], None), (CASES[1], 0.01), (CASES[3], None), (CASES[3], 0.01)):
        for dtype in ("float64", "float32"):
            args = ln_inputs(c, dtype, epsilon)
            got = kit.user(args, target="layer_norm")
            want = kit.reference(args, target="layer_norm")
            label = t("{label}, {call}, {dtype}", label=c.label, dtype=dtype,
                      call=f"layer_norm(x, gamma, beta{'' if epsilon is None else f', epsilon={epsilon}'})")
            try:
                compare(got, want, t("layer_norm's output"), "(..., D)", tol=kit.tolerance(dtype))
            except Fail as fail:
                found = kit.name_mistake(args, got, _LN_MISTAKES, run=lambda m: m.impl(*args), tol=kit.tolerance(dtype))
                raise Fail(t("{label}: {fail}", label=label, fail=fail.message), found or fail.diagnosis) from None


@check("numerics", "a constant row of x + sublayer_output comes out as beta, not NaN")
def constant_row(kit):
    c = CASES[2]
    args = inputs(c, "float64")
    got = kit.user(args)
    if not isinstance(got, np.ndarray) or got.shape != (c.B, c.T, c.D):
        raise Fail(t("{label}: the output should be a NumPy array of shape (B, T, D) = {want} first", label=c.label,
                     want=(c.B, c.T, c.D)))
    row = got[0, 0]
    if not np.all(np.isfinite(row)):
        raise Fail(t("{label}: x[0, 0] + sublayer_output[0, 0] = [2.5, 2.5, ...] has variance 0 and came out {row}...: "
                     "divide by np.sqrt(var + epsilon), epsilon inside the square root", label=c.label,
                     row=row[:3].tolist()))


@check("properties", "x and sublayer_output play the same role: add_and_norm(x, s) == add_and_norm(s, x)")
def symmetric(kit):
    for c in CASES[:2]:
        x, s, gamma, beta = inputs(c, "float64")
        one, other = kit.user((x, s, gamma, beta)), kit.user((s, x, gamma, beta))
        try:
            compare(other, one, "add_and_norm(sublayer_output, x)", "(..., D)")
        except Fail as fail:
            raise Fail(t("{label}: compared with your add_and_norm(x, sublayer_output): {fail}. Only the sum "
                         "x + sublayer_output is normalised, so swapping the two must not change the result: add the "
                         "residual first, then apply layer_norm to the sum", label=c.label, fail=fail)) from None


@check("properties", "add_and_norm(x, s, gamma, beta) equals your layer_norm(x + s, gamma, beta)")
def uses_layer_norm(kit):
    c = CASES[0]
    x, s, gamma, beta = inputs(c, "float64")
    got = kit.user((x, s, gamma, beta))
    via = kit.user((x + s, gamma, beta), target="layer_norm")
    try:
        compare(got, via, t("add_and_norm's output"), "(..., D)")
    except Fail as fail:
        raise Fail(t("{label}: compared with your own layer_norm(x + sublayer_output, gamma, beta): {fail}. add_and_norm "
                     "is exactly that call, with layer_norm's default epsilon", label=c.label, fail=fail)) from None


@check("hygiene", "layer_norm leaves the caller's inputs unchanged")
def layer_norm_hygiene(kit):
    for c in CASES[:2]:
        sent = ln_inputs(c, "float64")
        _, after = kit.user(sent, target="layer_norm", return_args=True)
        for i, (before, now) in enumerate(zip(sent, after)):
            try:
                compare(now, before, t("argument {number}", number=i + 1), exact=True)
            except Fail as fail:
                raise Fail(t("{label}: layer_norm modified its input ({fail}); compute x - mean into a new array (no "
                             "x -= mean)", label=c.label, fail=fail)) from None
