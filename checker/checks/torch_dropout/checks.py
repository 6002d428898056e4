"""Hidden checks: inverted dropout by hand, dropout(x, p, training, generator).

The standard checks run the deterministic cases only (evaluation, p = 0 and p = 1 in training),
where the output is fixed and compared exactly. Training with 0 < p < 1 is random: the checks
below hold what every correct implementation shares, whatever its way of drawing the mask:
  - every element comes out either 0 or x / (1 - p) (exact, up to rounding);
  - the share of zeros is p and the mean of y / x is 1, within _SIGMAS standard errors on
    N = 24000 elements (seeded, so a given implementation always gets the same verdict);
  - the mask is drawn per element (no two batch items share it) and with the caller's generator;
  - the gradient is keep / (1 - p), the mask is made on x's device.
"""

import math

import torch

from checker.checks.torch_dropout.driver import dropout_backward, two_draws_without_generator
from checker.kit import Fail, expect_raises, Mistake, UserError, at_line, case, check, compare, expect_structure, user_line
from checker.lang import t

TARGET = "dropout"
OUTPUTS = [("output", "(...)")]
DRAWS = True  # generator=None draws the mask from the global generator, as F.dropout does
GRADIENTS = False  # the gradient is checked below, in training mode, where it carries the mask

# The deterministic cases, every dimension its own size: evaluation (twice, p = 0.3 and 0.6, ranks 3
# and 4), p = 0 in training (the identity), p = 1 in training (zeros).
CASES = [
    case(1, B=3, T=5, D=4, p=0.3, training=False),
    case(2, N=7, D=6, p=0.0, training=True),
    case(3, B=2, T=3, D=5, p=1.0, training=True),
    case(4, B=2, H=3, T=4, D=2, p=0.6, training=False),
]
# The random cases: p never 0.5, so keeping with probability p instead of 1 - p shows.
TIMING = case(7, B=16, T=128, D=256, p=0.1, training=True)
_TRAIN = [
    case(5, B=40, T=30, D=20, p=0.3, seed=11),
    case(6, N=600, D=40, p=0.75, seed=12),
]
# Statistics on N = 24000 elements. The share of zeros has standard error sqrt(p (1 - p) / N)
# (0.0030 at p = 0.3, 0.0028 at p = 0.75) and the mean of y / x, sqrt(p / ((1 - p) N)) (0.0042 and
# 0.011). A correct dropout lands outside 6 standard errors with probability 2e-9; every mistake
# below moves the share by |1 - 2p| >= 0.4 or the mean by p >= 0.3, more than 25 standard errors.
_SIGMAS = 6.0
# Elements are |x| >= 0.5, so y / x is computed to ~1e-16 relative; kept elements are x / (1 - p) to
# float32 rounding at worst.
_RATIO_TOL = 1e-5


def _x(c, dtype="float64"):
    shape = [c.dims[k] for k in ("B", "H", "T", "N") if k in c.dims] + [c.D]
    z = torch.randn(shape, generator=c.generator(), dtype=torch.float64)
    return (torch.sign(z) * (0.5 + z.abs())).to(getattr(torch, dtype))  # |x| >= 0.5: y / x is well defined


def inputs(c, dtype):
    return _x(c, dtype), c.p, c.training, None


# ----------------------------------------------------------------------------- named mistakes


def _draw(x, keep_prob, generator, shape=None):
    return torch.bernoulli(torch.full(shape or x.shape, keep_prob, dtype=x.dtype), generator=generator)


def _no_rescale(x, p=0.5, training=True, generator=None):
    return x * _draw(x, 1 - p, generator) if training else x


def _times_keep(x, p=0.5, training=True, generator=None):
    return x * _draw(x, 1 - p, generator) * (1 - p) if training else x


def _over_p(x, p=0.5, training=True, generator=None):
    return x * _draw(x, 1 - p, generator) / p if training and p > 0 else x


def _keep_p(x, p=0.5, training=True, generator=None):
    return x * _draw(x, p, generator) / (1 - p) if training and p < 1 else x * 0.0 if training else x


def _shared_mask(x, p=0.5, training=True, generator=None):
    return x * _draw(x, 1 - p, generator, shape=x.shape[1:]) / (1 - p) if training and 0 < p < 1 else \
        (x * 0.0 if training and p == 1 else x)


def _right(x, p=0.5, training=True, generator=None):
    if not training or p == 0.0:
        return x
    return x * 0.0 if p == 1.0 else x * _draw(x, 1 - p, generator) / (1 - p)


def _half(x, p=0.5, training=True, generator=None):
    return x * _draw(x, 0.5, generator) / (1 - p) if training and p < 1 else x * 0.0 if training else x


def _eval_times_keep(x, p=0.5, training=True, generator=None):
    return _right(x, p, training, generator) if training else x * (1 - p)


def _eval_scaled(x, p=0.5, training=True, generator=None):
    return _right(x, p, training, generator) if training else x / (1 - p)


def _zero_over_zero(x, p=0.5, training=True, generator=None):
    if not training:
        return x
    return x * _draw(x, 1 - p, generator) / torch.tensor(1 - p, dtype=x.dtype)


# Mistakes of the deterministic cases, named by the standard numerics check.
MISTAKES = [
    Mistake("eval scales by 1 - p", _eval_times_keep,
            "in evaluation your output is x · (1 - p): that is the original (non-inverted) dropout, which scales at "
            "test time. Inverted dropout divides the survivors by 1 - p during training, so evaluation returns x as it "
            "is"),
    Mistake("eval scales by 1 / (1 - p)", _eval_scaled,
            "in evaluation your output is x / (1 - p): the scale belongs to the kept elements in training only; with "
            "training=False return x unchanged"),
    Mistake("p = 1 gives 0 / 0", _zero_over_zero,
            "with p = 1 your output is NaN: every element is dropped, and x · 0 / (1 - 1) is 0 / 0. Handle p = 1 on "
            "its own (return zeros, e.g. x * 0.0 or torch.zeros_like(x)), as F.dropout does"),
]
# Mistakes of training mode, named by their statistics (and, by name, where one property alone shows one of them).
_TRAIN_MISTAKES = (
    Mistake("no rescaling", _no_rescale,
            "the kept elements equal x: inverted dropout scales them by 1 / (1 - p), so that the expectation of every "
            "element stays x and evaluation needs no scaling: y = x * keep / (1 - p)"),
    Mistake("scaled by 1 - p", _times_keep,
            "the kept elements equal x · (1 - p): divide by 1 - p, do not multiply, y = x * keep / (1 - p)"),
    Mistake("scaled by 1 / p", _over_p,
            "the kept elements equal x / p: the survivors are scaled by one over the probability of KEEPING them, "
            "1 / (1 - p), so that E[y] = (1 - p) · x / (1 - p) = x"),
    Mistake("keeps with probability p", _keep_p,
            "about 1 - p of the elements are zeroed: p is the probability of DROPPING an element (as nn.Dropout's p), "
            "so keep = (torch.rand_like(x) >= p), or torch.bernoulli(torch.full_like(x, 1 - p))"),
    Mistake("one mask for every batch item", _shared_mask,
            "every batch item has the same zero pattern: the mask is drawn for one item and broadcast. Draw it for x's "
            "whole shape, one Bernoulli per element"),
    Mistake("drops half whatever p", _half,
            "about half of the elements are zeroed whatever p is: a fair coin (torch.randint(0, 2, ...), "
            "torch.rand(...) > 0.5) ignores p. Keep each element with probability 1 - p: keep = (torch.rand_like(x) "
            ">= p)"),
)
_NAMED = {m.name: m for m in _TRAIN_MISTAKES}


# ----------------------------------------------------------------------------- statistics


def _profile(x, y, p):
    """What training-mode dropout looks like from outside: zero share, mean ratio, kept values, sharing."""
    ratio = y.double() / x.double()
    zero = ratio == 0
    kept = ratio[~zero]
    rows = zero.reshape(zero.shape[0], -1)
    return {
        "zero_share": float(zero.double().mean()),
        "mean_ratio": float(ratio.mean()),
        "kept_scale": float(kept.median()) if kept.numel() else math.nan,
        "off_scale": int(((kept - 1 / (1 - p)).abs() > _RATIO_TOL / (1 - p)).sum()),
        "kept": int(kept.numel()),
        "shared": bool((rows == rows[0]).all()) if rows.shape[0] > 1 else False,
    }


def _share_sigma(p, n):
    return math.sqrt(p * (1 - p) / n)


def _mean_sigma(p, n):
    return math.sqrt(p / ((1 - p) * n))


def _same_profile(c):
    n = math.prod(c.dims[k] for k in c.dims if k != "seed")

    def same(a, b):
        if a["shared"] or b["shared"]:  # one draw per row position: its share of zeros varies too much to compare
            return a["shared"] and b["shared"]
        return abs(a["zero_share"] - b["zero_share"]) <= _SIGMAS * 2 * _share_sigma(c.p, n) \
            and math.isclose(a["kept_scale"], b["kept_scale"], rel_tol=1e-4)

    return same


# ----------------------------------------------------------------------------- checks


@check("structure", "dropout is a function taking (x, p, training, generator)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["x", "p", "training", "generator"])


@check("numerics", "p = 1 drops everything: zeros, not NaN or a ZeroDivisionError")
def p_one(kit):
    c = CASES[2]
    try:
        got = kit.user(inputs(c, "float64"), case=c)
    except UserError as err:
        if err.not_implemented or err.kind != "ZeroDivisionError":
            raise
        raise Fail(t("{label}: p = 1 raised ZeroDivisionError{where}: 1 / (1 - p) is 1 / 0", label=c.label,
                     where=at_line(err)),
                   t("handle p = 1 on its own: every element is dropped, so return zeros (x * 0.0 or "
                     "torch.zeros_like(x))"), line=None) from None
    if isinstance(got, torch.Tensor) and torch.isnan(got).any():
        raise Fail(t("{label}: p = 1 gave NaN", label=c.label), t(MISTAKES[2].explain))
    compare(got, torch.zeros_like(inputs(c, "float64")[0]), t("{label}: output", label=c.label), "(...)")


def _train(kit, c, dtype="float64", seed=None):
    x = _x(c, dtype)
    g = torch.Generator().manual_seed(c.seed if seed is None else seed)
    y = kit.user((x, c.p, True, g))
    compare_kind = torch.zeros_like(x)
    if not isinstance(y, torch.Tensor) or y.shape != x.shape or y.dtype != x.dtype:
        compare(y, compare_kind, t("{label}, training: output", label=c.label), "(...)")
    return x, y


@check("properties", "training: the mask is drawn per element, not shared by the batch items")
def per_element(kit):
    c = _TRAIN[0]
    x, y = _train(kit, c)
    prof = _profile(x, y, c.p)
    if prof["shared"]:
        raise Fail(t("{label}: all {count} batch items have the same zero pattern", label=c.label, count=c.B),
                   t(_NAMED["one mask for every batch item"].explain))
    zero = (y == 0).reshape(-1, y.shape[-1])  # one row per (item, position): its D features
    if bool((zero.all(-1) | (~zero).all(-1)).all()):
        raise Fail(t("{label}: every row of {d} features is dropped or kept whole", label=c.label, d=y.shape[-1]),
                   t("your mask has one draw per row (token), broadcast over the last axis. Dropout draws one "
                     "Bernoulli per element, a mask of x's whole shape"))


@check("properties", "training: every element is either 0 or x / (1 - p)")
def values(kit):
    for c, dtype in zip(_TRAIN, ("float64", "float32")):
        x, y = _train(kit, c, dtype)
        prof = _profile(x, y, c.p)
        if prof["off_scale"]:
            named = kit.name_mistake((), prof, _TRAIN_MISTAKES, run=lambda m, c=c, x=x: _profile(
                x, m.impl(x, c.p, True, torch.Generator().manual_seed(c.seed)), c.p), same=_same_profile(c))
            raise Fail(t("{label}, {dtype}: {count} of the {total} kept elements are not x / (1 - p) = x · {scale:.6g}; "
                         "their typical y / x is {got:.6g}", label=c.label, dtype=dtype, count=prof["off_scale"],
                         total=prof["kept"], scale=1 / (1 - c.p), got=prof["kept_scale"]), named)


@check("properties", "training: about p of the elements are zeroed and the mean is preserved (seeded, ±6 standard "
                     "errors)")
def statistics(kit):
    exact = []  # draws whose number of zeros is exactly round(p · N)
    for c, seed in [(c, None) for c in _TRAIN] + [(_TRAIN[0], _TRAIN[0].seed + 1)]:
        x, y = _train(kit, c, seed=seed)
        prof, n = _profile(x, y, c.p), y.numel()
        exact.append(round(prof["zero_share"] * n) == round(c.p * n))
        share_tol, mean_tol = _SIGMAS * _share_sigma(c.p, n), _SIGMAS * _mean_sigma(c.p, n)
        named = None
        if abs(prof["zero_share"] - c.p) > share_tol or abs(prof["mean_ratio"] - 1) > mean_tol:
            named = kit.name_mistake((), prof, _TRAIN_MISTAKES, run=lambda m, c=c, x=x: _profile(
                x, m.impl(x, c.p, True, torch.Generator().manual_seed(c.seed)), c.p), same=_same_profile(c))
        if abs(prof["zero_share"] - c.p) > share_tol:
            raise Fail(t("{label}: {share:.4f} of the elements are zero; with p = {p} it should be within {tol:.4f} of "
                         "{p}", label=c.label, share=prof["zero_share"], p=c.p, tol=share_tol), named)
        if abs(prof["mean_ratio"] - 1) > mean_tol:
            raise Fail(t("{label}: the mean of y / x is {mean:.4f}; inverted dropout keeps every element's expectation, "
                         "so it should be within {tol:.4f} of 1", label=c.label, mean=prof["mean_ratio"], tol=mean_tol),
                       named)
    # Independent draws: the number of zeros is Binomial(N, p), its standard deviation √(N p (1 - p)) ≈ 70
    # here, so it equals round(p · N) in one draw with probability < 1%, in all three < 1e-6.
    if all(exact):
        raise Fail(t("in each of {count} draws exactly round(p · N) elements are zero", count=len(exact)),
                   t("your dropout picks a fixed number of elements to drop (a permutation, topk, a sort), so the "
                     "elements are not independent. Draw each element on its own, keep_i ~ Bernoulli(1 - p): "
                     "torch.rand(x.shape, ...) >= p or torch.bernoulli"))


@check("properties", "training draws with the caller's generator (the same seed gives the same mask), and with none "
                      "from the global random state (two calls, two masks)")
def reproducible(kit):
    c = _TRAIN[0]
    (_, first), (_, again), (_, other) = _train(kit, c, seed=5), _train(kit, c, seed=5), _train(kit, c, seed=6)
    if not torch.equal(first, again):
        raise Fail(t("{label}: two calls with generators seeded alike gave different outputs", label=c.label),
                   t("draw the mask with the caller's generator (torch.bernoulli(probs, generator=generator) or "
                     "torch.rand(x.shape, generator=generator, ...)); the global random state is for generator=None "
                     "only"))
    if torch.equal(first, other):
        raise Fail(t("{label}: generators with different seeds gave the same output: your dropout reseeds, or does not "
                     "use the generator it is given", label=c.label))
    draws = kit.drive(two_draws_without_generator, _x(c), c.p, c.seed)
    if all(isinstance(y, torch.Tensor) for y in draws) and torch.equal(*draws):
        raise Fail(t("{label}: two calls in a row with generator=None gave the same mask", label=c.label),
                   t("with no generator the mask comes from the global random state, which moves on after each draw "
                     "(torch.rand_like(x), as F.dropout does): a generator made inside and seeded, or a mask kept "
                     "from the first call, repeats one mask at every training step"))


@check("gradients", "training: the gradient is keep / (1 - p), zero where an element was dropped")
def gradient(kit):
    c = _TRAIN[1]
    x = _x(c)
    cot = torch.randn(x.shape, generator=c.generator(salt=23), dtype=torch.float64)
    got = kit.drive(dropout_backward, x, c.p, c.seed, cot)
    out, grad = got["out"], got["grad"]
    if grad is None:
        raise Fail(t("{label}: no gradient reaches x: something detaches it from the graph (.detach(), .data, "
                     "torch.no_grad)", label=c.label))
    compare(grad, cot * out / x, t("{label}: gradient of x", label=c.label), "(...)", tol=(1e-9, 1e-12))


@check("properties", "the mask is made on x's device (run on the meta device)")
def device(kit):
    c = _TRAIN[0]
    x = _x(c)
    try:
        layout = kit.layout((x, c.p, True, None))
    except UserError as err:
        if err.not_implemented or "device" not in err.text:
            raise
        raise Fail(t("{label}, x on the meta device: {error}{where}", label=c.label,
                     error=f"{err.kind}: {err.text.splitlines()[0]}", where=at_line(err)),
                   t("the mask was made on the CPU: use torch.rand_like(x) / torch.full_like(x, 1 - p), or pass "
                     "device=x.device"), line=user_line(err)) from None
    stray = [entry["device"] for entry in layout if entry and entry["device"] != "meta"]
    if stray:
        raise Fail(t("{label}: with x on the meta device, your result came back on {device}: create it on x's device",
                     label=c.label, device=stray[0]))


@check("properties", "p outside [0, 1] raises ValueError, as F.dropout does")
def bad_p(kit):
    x = _x(CASES[0])
    expect_raises([(f"dropout(x, p={p})", lambda p=p: kit.user((x, p, True, torch.Generator().manual_seed(1))))
                   for p in (-0.1, 1.5)],
                  t("a probability outside [0, 1] gives a negative keep rate or a scale that flips signs, silently "
                    "(F.dropout raises ValueError(\"dropout probability has to be between 0 and 1\"))"))