"""Hidden checks: NumPy layer normalization."""


import numpy as np
import torch

from checker.lang import t
from checker.kit import (Fail, Mistake, UserError, case, check, compare, expect_structure, matches, raised, crash_diagnosis,
                         unused_argument)

_TRACK = "numpy"  # no autograd checks
TARGET = "layer_norm"
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
OUTPUTS = [("output", "(..., D)")]

# Every dimension its own size, rank 3 and rank 2. Case 3 holds a constant row (variance 0) and a
# row with a large mean; case 4 passes epsilon=0.01 explicitly on rows of small variance, so an
# epsilon that is ignored, or added outside the square root, shows.
CASES = [
    case(1, B=2, T=5, D=8),
    case(2, N=6, D=7),
    case(3, B=3, T=4, D=6, rows="x[0, 0] constant 2.5, x[1, 2] mean 500"),
    case(4, N=5, D=9, epsilon=0.01, rows="variance about 0.01"),
]


def _lead(c) -> tuple:
    return (c.B, c.T) if "B" in c.dims else (c.N,)


def inputs(c, dtype):
    g = c.generator()
    x = torch.randn(*_lead(c), c.D, generator=g, dtype=torch.float64) * 1.5 + 0.3
    gamma = torch.randn(c.D, generator=g, dtype=torch.float64)  # random, so gamma and beta cannot be swapped unseen
    beta = torch.randn(c.D, generator=g, dtype=torch.float64)
    if c.id == 3:
        x[0, 0] = 2.5  # variance exactly 0 (2.5 and its sums are exact)
        x[1, 2] = 500.0 + 20.0 * torch.randn(c.D, generator=g, dtype=torch.float64)
    if c.id == 4:
        x = x * 0.1  # variance ~0.02, same order as epsilon
    args = tuple(a.numpy().astype(dtype) for a in (x, gamma, beta))
    return args + ((c.epsilon,) if "epsilon" in c.extra else ())


# ----------------------------------------------------------------------------- named mistakes


def norm(x, gamma, beta, epsilon=1e-6, *, ddof=0, eps_outside=False, axis=-1, swap=False, shift=True, scale=True,
         center=True, root=True, beta_inside=False, var_centred=True):
    """Layer norm with knobs; every knob at its default gives the right answer. center=False drops the mean from
    the numerator and the variance (RMSNorm); var_centred=False only from the variance, mean(x²)."""
    if swap:
        gamma, beta = beta, gamma
    mean = x.mean(axis=axis, keepdims=True) if center else 0.0
    std = x.std(axis=axis, keepdims=True, ddof=ddof) if center and var_centred else \
        np.sqrt((x * x).mean(axis=axis, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):  # no epsilon: a constant row is 0/0, as in the user's code
        x_hat = (x - mean) / (std + epsilon) if eps_outside else (x - mean) / np.sqrt(std**2 + epsilon) if root \
            else (x - mean) / (std**2 + epsilon)
    if beta_inside:
        return gamma * (x_hat + beta)
    return (gamma * x_hat if scale else x_hat) + (beta if shift else 0)


def _variant(default_eps=1e-6, **knobs):
    return lambda x, gamma, beta, epsilon=default_eps: norm(x, gamma, beta, epsilon, **knobs)


MISTAKES = [
    Mistake("unbiased variance", _variant(ddof=1),
            "your output equals layer norm with the unbiased variance (divide by D - 1, ddof=1): layer norm "
            "divides by D, np.var's default ddof=0"),
    Mistake("epsilon outside the square root", _variant(eps_outside=True),
            "your output equals (x - mean) / (std + epsilon), the paper walkthrough's version: epsilon goes inside the "
            "square root, (x - mean) / np.sqrt(var + epsilon)"),
    Mistake("annotated-transformer std", _variant(ddof=1, eps_outside=True),
            "your output equals (x - mean) / (std + epsilon) with the unbiased std (ddof=1), the Annotated "
            "Transformer's LayerNorm (torch's x.std() is unbiased): use the biased variance and "
            "np.sqrt(var + epsilon)"),
    Mistake("no epsilon", _variant(default_eps=0.0),
            "your output equals layer norm without epsilon: divide by np.sqrt(var + epsilon); epsilon also keeps a "
            "constant row (variance 0) from becoming 0/0 = NaN"),
    Mistake("default epsilon 1e-5", _variant(default_eps=1e-5),
            "your default epsilon is 1e-5 (nn.LayerNorm's): this kata follows the NumPy tutorial, epsilon=1e-6"),
    Mistake("gamma and beta swapped", _variant(swap=True),
            "your output equals beta * x_hat + gamma: gamma and beta are swapped, y = gamma * x_hat + beta"),
    Mistake("mean not subtracted", _variant(center=False),
            "your output divides x by its root mean square without subtracting the mean: that is RMSNorm; layer "
            "norm centres first, (x - mean) / sqrt(var + eps)"),
    Mistake("beta inside the scale", _variant(beta_inside=True),
            "your output is gamma * (x_hat + beta): the shift comes after the scale, gamma * x_hat + beta"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "layer_norm is a function taking (x, gamma, beta, epsilon)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["x", "gamma", "beta", "epsilon"])


@check("shapes", "rank 2 and rank 3 inputs keep their shape (statistics taken with keepdims)")
def ranks(kit):
    for c in CASES[:2]:
        args = inputs(c, "float64")
        try:
            got = kit.user(args)
        except UserError as err:
            if err.not_implemented or "broadcast" not in err.text:
                raise
            raise raised(c.label, err, crash_diagnosis(err)) from None  # keepdims when the shapes show a lost axis
        if not isinstance(got, np.ndarray) or got.shape != args[0].shape:
            shape = got.shape if isinstance(got, np.ndarray) else t("a {kind}", kind=type(got).__name__)
            raise Fail(t("{label}: output should be a NumPy array of x's shape (..., D) = {want}, got {got}",
                         label=c.label, want=args[0].shape, got=shape))


@check("numerics", "the epsilon argument is used: epsilon=0.01, 1e-6 and 10 give different outputs")
def epsilon_used(kit):
    x, gamma, beta, _ = inputs(CASES[3], "float64")  # variance ~0.02: the two epsilons move the output apart
    ignored = unused_argument(kit, "epsilon", (({"args": (x, gamma, beta, 0.01)}, "0.01"),
                                               ({"args": (x, gamma, beta, 1e-6)}, "1e-6"),
                                               ({"args": (x, gamma, beta, 10.0)}, "10")))
    if ignored:
        raise ignored


@check("numerics", "a constant row (variance 0) comes out finite, not NaN")
def constant_row(kit):
    c = CASES[2]
    got = kit.user(inputs(c, "float64"))
    if not isinstance(got, np.ndarray) or got.shape != (c.B, c.T, c.D):
        raise Fail(t("{label}: the output should be a NumPy array of shape (B, T, D) = {want} first", label=c.label,
                     want=(c.B, c.T, c.D)))
    row = got[0, 0]
    if not np.all(np.isfinite(row)):
        raise Fail(t("{label}: x[0, 0] = [2.5, 2.5, ...] has variance 0 and came out {row}...: divide by "
                     "np.sqrt(var + epsilon), with epsilon inside the square root, so a zero variance gives "
                     "0 / sqrt(epsilon) = 0 and the row becomes beta", label=c.label, row=row[:3].tolist()))


@check("properties", "adding 10⁶ to every input leaves the output unchanged (variance computed stably)")
def shift_invariance(kit):
    # Values on a 2^-16 grid: x + 1e6 is exact in float64, so a correct two-pass layer norm moves by
    # ~1e-10 (the rounding of the mean), while mean(x²) - mean² loses ~1e-4 to cancellation.
    c = CASES[0]
    x, gamma, beta = inputs(c, "float64")
    x = np.round(x * 2**16) / 2**16
    plain = kit.user((x, gamma, beta))
    shifted = kit.user((x + 1e6, gamma, beta))
    try:
        compare(shifted, plain, t("output for x + 1e6"), "(..., D)", tol=(1e-7, 1e-7))
    except Fail as fail:
        # Lost precision is the cause only where the premise holds: the output for x itself is right. Code that
        # is wrong on x too (a variance that is not centred at all) fails here for that reason, not for rounding.
        precision = t("your variance loses precision when the mean is large: subtract the mean before squaring, "
                      "var = mean((x - mean)²); mean(x²) - mean² cancels catastrophically")
        right = matches(plain, kit.reference((x, gamma, beta)))
        raise Fail(t("{label}: compared with your own output for x: {fail}. Layer norm subtracts each vector's mean, "
                     "so shifting every value must not change the result", label=c.label, fail=fail),
                   precision if right else None) from None
