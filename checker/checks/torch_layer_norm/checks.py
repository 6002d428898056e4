"""Hidden checks: PyTorch layer normalization from scratch."""

import torch
from torch import nn

from checker.kit import Fail, Mistake, case, check, compare, expect_structure, unused_argument
from checker.lang import t

TARGET = "LayerNorm"
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
OUTPUTS = [("output", "(..., D)")]

# Every dimension its own size, inputs of rank 3, 2 and 4 (so a hard-coded axis fails), the
# default eps once (init without eps), and an eps comparable to the variance once (so eps's
# place in the formula changes the result by percents, not by 1e-6).
CASES = [
    case(1, B=2, T=5, D=8, eps="default", rows="normal: 2·randn + 0.5"),
    case(2, T=7, D=6, eps=1e-2, rows="small spread: 0.5 + 0.1·randn, variance close to eps"),
    case(3, B=2, H=3, T=4, D=10, eps=1e-5, rows="normal, x[1, 2, 3] constant (2.5), x[0, 1, 2] tiny (1e-6·randn)"),
    case(4, B=3, T=4, D=5, eps=1e-4, rows="normal: 2·randn + 0.5"),
]
TIMING = case(5, B=16, T=128, D=256, eps=1e-5, rows="normal: 2·randn + 0.5")
# x[1, 2, 3] in case 3 has variance 0. 2.5 and every partial sum of it are exact in floating
# point, so its mean is exactly 2.5 whatever the summation order and it must give exactly beta.
_CONSTANT_AT, _CONSTANT = (1, 2, 3), 2.5
# x[0, 1, 2] in case 3 has variance ~1e-12, far below eps = 1e-5 and of the order of any eps written into code
# (BERT's 1e-12): there "no eps at all" (x_hat ~ 1) and "a tiny eps" (x_hat ~ 1/√2) and the argument (x_hat ~ 3e-4)
# all differ, so no one of them is taken for another.
_TINY_AT, _TINY = (0, 1, 2), 1e-6
# Mean 1000, spread 0.01: mean(x²) - mean² cancels 10 of float64's 16 digits here.
_LARGE_MEAN = case(6, B=2, T=3, D=16, eps=1e-5, rows="large mean: 1000 + 0.01·randn")


def init(c):
    return {"d_model": c.D} if c.eps == "default" else {"d_model": c.D, "eps": c.eps}


def inputs(c, dtype):
    g = c.generator()
    shape = [c.dims[k] for k in ("B", "H", "T") if k in c.dims] + [c.D]
    z = torch.randn(shape, generator=g, dtype=torch.float64)
    kind = c.rows.split(":")[0].split(",")[0]
    x = {"normal": 2 * z + 0.5, "small spread": 0.5 + 0.1 * z, "large mean": 1000 + 0.01 * z}[kind]
    if "constant" in c.rows:
        x[_CONSTANT_AT] = _CONSTANT
    if "tiny" in c.rows:
        x[_TINY_AT] = _TINY * z[_TINY_AT]
    return (x.to(getattr(torch, dtype)),)


# ----------------------------------------------------------------------------- named mistakes


def normalise(x, gamma, beta, eps, *, var="biased", eps_at="inside", dims=(-1,), affine="gamma beta", center=True):
    """Layer norm with knobs; every knob at its default gives the right answer."""
    mean = x.mean(dim=dims, keepdim=True) if center else torch.zeros_like(x[..., :1])
    if not center:  # RMSNorm's statistic: the mean square, not the variance
        variance = (x * x).mean(dim=dims, keepdim=True)
        x_hat = x / torch.sqrt(variance + eps)
        return gamma * x_hat + beta
    if var == "one pass":
        variance = (x * x).mean(dim=dims, keepdim=True) - mean * mean
    elif var == "uncentred":  # the mean square of x, not of x - mean
        variance = (x * x).mean(dim=dims, keepdim=True)
    else:
        variance = x.var(dim=dims, keepdim=True, unbiased=var == "unbiased")
    if eps_at == "inside":
        x_hat = (x - mean) / torch.sqrt(variance + eps)
    elif eps_at == "outside":
        x_hat = (x - mean) / (torch.sqrt(variance) + eps)
    else:  # "none"
        x_hat = (x - mean) / torch.sqrt(variance)
    return {"gamma beta": gamma * x_hat + beta, "beta gamma": beta * x_hat + gamma,
            "gamma": gamma * x_hat, "beta": x_hat + beta, "beta inside": gamma * (x_hat + beta)}[affine]


def _variant(default_eps=1e-5, fixed_eps=None, **knobs):
    class Wrong(nn.Module):
        def __init__(self, d_model, eps=default_eps):
            super().__init__()
            self.eps = eps if fixed_eps is None else fixed_eps
            self.gamma = nn.Parameter(torch.ones(d_model))
            self.beta = nn.Parameter(torch.zeros(d_model))

        def forward(self, x):
            return normalise(x, self.gamma, self.beta, self.eps, **knobs)

    return Wrong


MISTAKES = [
    Mistake("unbiased variance", _variant(var="unbiased"),
            "your output equals layer norm with the unbiased variance (divided by D - 1): x.var() and torch.var "
            "default to unbiased=True; use x.var(-1, unbiased=False, keepdim=True), as nn.LayerNorm does"),
    Mistake("unbiased std plus eps", _variant(var="unbiased", eps_at="outside"),
            "your output equals (x - mean) / (x.std(-1) + eps): Tensor.std is unbiased (divides by D - 1) and "
            "eps belongs inside the square root; use (x - mean) / torch.sqrt(var + eps) with the biased variance"),
    Mistake("eps outside the root", _variant(eps_at="outside"),
            "your output equals (x - mean) / (std + eps), with eps outside the square root (the paper walkthrough's NumPy "
            "LayerNorm): use (x - mean) / torch.sqrt(var + eps)"),
    Mistake("default eps 1e-6", _variant(default_eps=1e-6),
            "your output equals layer norm with eps=1e-6 where the default eps=1e-5 applies: the default is 1e-5, "
            "as in nn.LayerNorm (the NumPy tutorial and the paper walkthrough use 1e-6)"),
    Mistake("gamma and beta swapped", _variant(affine="beta gamma"),
            "your output equals beta * x_hat + gamma: gamma scales and beta shifts, gamma * x_hat + beta"),
    Mistake("beta inside the scale", _variant(affine="beta inside"),
            "your output is gamma * (x_hat + beta): the shift comes after the scale, gamma * x_hat + beta"),
    Mistake("one-pass variance", _variant(var="one pass"),
            "your variance is mean(x²) - mean(x)², which cancels catastrophically when the mean is large "
            "compared with the spread: subtract the mean first, ((x - mean) ** 2).mean(-1), or use "
            "x.var(-1, unbiased=False)"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "LayerNorm is an nn.Module with parameters gamma (D,) and beta (D,)")
def structure(kit):
    expect_structure(kit, TARGET, module=True, params=["d_model", "eps"], forward=["x"])
    got = kit.inspect(TARGET, {"d_model": 6})["parameters"]
    missing = [n for n in ("gamma", "beta") if n not in got]
    if missing:
        raise Fail(t("LayerNorm(d_model=6) has no parameter {missing}; it has {names}", missing=", ".join(missing),
                     names=", ".join(f"{n} {tuple(v)}" for n, v in got.items()) or t("none")),
                   _why_missing(missing, got))
    expect_structure(kit, TARGET, module=True, init={"d_model": 6})


def _why_missing(missing: list, got: dict) -> str:
    """What is true of the parameters a LayerNorm lacks: held under other names (nn.LayerNorm's weight and bias),
    or never built (nn.LayerNorm's bias=False or elementwise_affine=False)."""
    others = [n for n, shape in got.items() if n not in ("gamma", "beta") and shape == [6]]
    renamed = dict(zip(missing, others))  # in order: gamma first, as nn.LayerNorm's weight comes before its bias
    absent = [n for n in missing if n not in renamed]
    pairs = ", ".join(f"{o} → {n}" for n, o in renamed.items())
    if renamed and not absent:
        return t("the weights are registered under other names ({pairs}), so the reference's gamma and beta cannot "
                 "be loaded into them: name them gamma and beta, as the docstring does", pairs=pairs)
    if renamed:
        return t("a parameter of shape (d_model,) is registered under another name ({pairs}), and there is no {absent} "
                 "at all: name the scale gamma and the shift beta, as the docstring does, and build both", pairs=pairs,
                 absent=absent[0])
    if absent == ["beta"]:
        return t("your layer norm has no shift at all, as nn.LayerNorm(bias=False) builds it: the contract's learns a "
                 "scale and a shift, gamma * x_hat + beta; add self.beta = nn.Parameter(torch.zeros(d_model))")
    if absent == ["gamma"]:
        return t("your layer norm has no scale at all: the contract's learns a scale and a shift, gamma * x_hat + "
                 "beta; add self.gamma = nn.Parameter(torch.ones(d_model))")
    return t("your layer norm learns neither a scale nor a shift, as nn.LayerNorm(elementwise_affine=False) builds "
             "it: the contract's has gamma (ones) and beta (zeros), gamma * x_hat + beta; add both as nn.Parameter")


@check("structure", "gamma starts at ones and beta at zeros")
def initial_values(kit):
    state = kit.user((), init={"d_model": 6}, method="state_dict")  # a fresh module, no weights loaded
    for name, value, what in (("gamma", 1.0, "ones"), ("beta", 0.0, "zeros")):
        got = state.get(name) if isinstance(state, dict) else None
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != (6,):
            raise Fail(t("LayerNorm(6).state_dict() has no {name} of shape (6,)", name=name))
        if not torch.equal(got, torch.full((6,), value, dtype=got.dtype)):
            raise Fail(t("a fresh LayerNorm(6) has {name} = {values}", name=name,
                         values=[round(v, 3) for v in got.tolist()]),
                       t("{name} starts at {what} (torch.{what}(d_model)), so that a new layer norm only normalises",
                         name=name, what=what))


@check("numerics", "a constant vector (variance 0) gives exactly beta, not NaN")
def constant_vector(kit):
    c = CASES[2]
    for dtype in ("float64", "float32"):
        got = kit.user(kit.inputs(c, dtype), case=c, dtype=dtype)
        beta = kit.state(c, dtype)["beta"]
        want = kit.reference(kit.inputs(c, dtype), case=c, dtype=dtype)
        if not isinstance(got, torch.Tensor) or got.shape != want.shape or got.dtype != want.dtype:
            compare(got, want, t("{label}: output", label=c.label), "(..., D)")  # says what is wrong with its kind, shape or dtype
        row = got[_CONSTANT_AT]
        if torch.isnan(row).any() or torch.isinf(row).any():
            raise Fail(t("{label}, {dtype}: x{at} = [{value}, {value}, ...] has variance 0 and came out {got}...: "
                         "divide by torch.sqrt(var + eps), eps inside the root, so 0 / sqrt(eps) = 0 and the row becomes "
                         "beta", label=c.label, dtype=dtype, at=list(_CONSTANT_AT), value=_CONSTANT,
                         got=[round(v, 3) for v in row.tolist()[:3]]))
        try:
            compare(row, beta, f"output{list(_CONSTANT_AT)}", "(D,)", tol=kit.tolerance(dtype))
        except Fail as fail:
            raise Fail(t("{label}, {dtype}: x{at} is constant, so x - mean = 0 and the output should be beta: {fail}",
                         label=c.label, dtype=dtype, at=list(_CONSTANT_AT), fail=fail)) from None


@check("numerics", "a large mean (1000) with a small spread (0.01) is normalised accurately")
def large_mean(kit):
    c = _LARGE_MEAN
    got = kit.user(kit.inputs(c), case=c)
    try:
        compare(got, kit.reference(kit.inputs(c), case=c), "output", "(..., D)")
    except Fail as fail:
        found = kit.diagnose(c, "float64", (got,))
        raise Fail(t("{label}, float64: {fail}", label=c.label, fail=fail.message), found or fail.diagnosis) from None
    # In float32 the inputs themselves carry ~0.6% of the spread in rounding, so correct
    # implementations differ by up to ~0.015 here; mean(x²) - mean² is off by units or NaN.
    (x32,) = kit.inputs(c, "float32")
    got = kit.user((x32,), case=c, dtype="float32")
    exact = kit.reference((x32.double(),), case=c).float()  # the exact answer for these float32 inputs
    try:
        compare(got, exact, "output", "(..., D)", tol=(0.0, 0.1))
    except Fail as fail:
        raise Fail(t("{label}, float32: {fail}. Subtract the mean before squaring: var = ((x - mean) ** 2).mean(-1); "
                     "mean(x²) - mean² cancels catastrophically when the mean is large", label=c.label, fail=fail)) from None


@check("numerics", "the eps argument is used: eps=1e-2 and eps=1e-6 give different outputs")
def eps_used(kit):
    # A relation, whatever constant the code holds instead (BERT's 1e-12, nn.LayerNorm's 1e-5, none at all): the
    # same weights and input under two eps whose reference outputs differ give bit for bit the same output.
    c = CASES[1]  # variance close to eps: the two eps move the output apart
    args, state = kit.inputs(c), kit.state(c, "float64")
    ignored = unused_argument(kit, "eps", tuple(({"args": args, "case": c, "state": state,
                                                   "init": {"d_model": c.D, "eps": eps}}, f"{eps:g}")
                                                 for eps in (1e-6, 1e-2, 10.0)))
    if ignored:
        raise ignored
