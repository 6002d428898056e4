"""Hidden checks: PyTorch position-wise feed-forward network (ReLU or GELU)."""

import math

import torch
import torch.nn.functional as F
from torch import nn

from checker.kit import Fail, expect_raises, Mistake, any_leading_axes, case, check, compare, expect_structure, matches
from checker.lang import t

TARGET = "FeedForward"
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
OUTPUTS = [("output", "(..., D)")]
DROPOUT = True  # the constructor takes dropout: check it acts in training only

# Every dimension its own size; both activations; inputs of rank 3 and 2 (and 4), so code that
# unpacks B, T, D = x.shape fails; one case with d_ff < d_model, so nothing assumes an expansion.
CASES = [
    case(1, B=2, T=5, D=6, d_ff=16, activation="relu"),
    case(2, T=7, D=4, d_ff=10, activation="gelu"),
    case(3, B=3, T=4, D=8, d_ff=12, activation="gelu"),
    case(4, B=2, N=3, T=5, D=9, d_ff=7, activation="relu"),
]
TIMING = case(5, B=16, T=128, D=256, d_ff=1024, activation="gelu")


def init(c):
    return {"d_model": c.D, "d_ff": c.d_ff, "dropout": 0.0, "activation": c.activation}


def inputs(c, dtype):
    shape = [c.dims[k] for k in ("B", "N", "T") if k in c.dims] + [c.D]
    # spread 1.5: the hidden pre-activations reach ±3, where GELU's approximations differ most
    return (1.5 * torch.randn(shape, generator=c.generator(), dtype=torch.float64).to(getattr(torch, dtype)),)


# ----------------------------------------------------------------------------- named mistakes


def _gelu_sigmoid(h):
    return h * torch.sigmoid(1.702 * h)


def _gelu_erf_half(h):
    return 0.5 * h * (1 + torch.erf(h / 2))


def _variant(act=None, *, also_after=False, before=False, residual=False):
    """act: {"relu": fn, "gelu": fn} or one fn for both; None gives the right activation."""
    right = {"relu": F.relu, "gelu": F.gelu}

    class Wrong(nn.Module):
        def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
            chosen = act if act is not None else right
            self.act = chosen[activation] if isinstance(chosen, dict) else chosen

        def forward(self, x):
            if before:
                return self.fc2(self.fc1(self.act(x)))
            out = self.fc2(self.act(self.fc1(x)))
            return x + out if residual else self.act(out) if also_after else out

    return Wrong


MISTAKES = [
    Mistake("GELU tanh approximation", _variant({"relu": F.relu, "gelu": lambda h: F.gelu(h, approximate="tanh")}),
            "your GELU is the tanh approximation 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))): use the exact GELU, "
            "0.5·x·(1 + erf(x/√2)), which is nn.GELU() and F.gelu(x) by default"),
    Mistake("GELU sigmoid approximation", _variant({"relu": F.relu, "gelu": _gelu_sigmoid}),
            "your GELU is the sigmoid approximation x·σ(1.702x): use the exact GELU, 0.5·x·(1 + erf(x/√2)) "
            "(nn.GELU())"),
    Mistake("GELU erf(x/2)", _variant({"relu": F.relu, "gelu": _gelu_erf_half}),
            "your GELU is 0.5·x·(1 + erf(x/2)): the argument of erf is x/√2 (math.sqrt(2)), or use nn.GELU()"),
    Mistake("residual inside", _variant(residual=True),
            "your output is x + FFN(x): the residual connection belongs to the sublayer around the feed-forward "
            "network (AddNorm), which adds it; return fc2(act(fc1(x))) alone"),
    Mistake("always ReLU", _variant(F.relu),
            "your output uses ReLU although activation='gelu' was asked: pick the activation from the "
            "activation argument (nn.GELU() for 'gelu')"),
    Mistake("always GELU", _variant(F.gelu),
            "your output uses GELU although activation='relu' was asked: pick the activation from the "
            "activation argument (nn.ReLU() for 'relu')"),
    Mistake("activation after fc2 too", _variant(also_after=True),
            "you also apply the activation to the output of fc2: FFN(x) = fc2(act(fc1(x))), and fc2's output "
            "is not activated"),
    Mistake("activation before fc1", _variant(before=True),
            "you apply the activation to the input, before fc1: it goes between the layers, fc2(act(fc1(x)))"),
    Mistake("no activation", _variant(lambda h: h),
            "your output has no activation: fc2(fc1(x)) is a single linear map; apply act between fc1 and fc2"),
    Mistake("sigmoid", _variant(torch.sigmoid),
            "your activation is a sigmoid: use ReLU (activation='relu') or the exact GELU (activation='gelu')"),
    Mistake("SiLU", _variant(F.silu),
            "your activation is SiLU/Swish, x·σ(x): use ReLU (activation='relu') or the exact GELU, "
            "0.5·x·(1 + erf(x/√2)) (activation='gelu')"),
    Mistake("tanh", _variant(torch.tanh),
            "your activation is tanh: use ReLU (activation='relu') or the exact GELU (activation='gelu')"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "FeedForward is an nn.Module with fc1 = Linear(d_model, d_ff) and fc2 = Linear(d_ff, d_model)")
def structure(kit):
    settings = {"d_model": 6, "d_ff": 16, "dropout": 0.0, "activation": "gelu"}
    expect_structure(kit, TARGET, module=True, params=["d_model", "d_ff", "dropout", "activation"], forward=["x"])
    built = kit.inspect(TARGET, settings)["parameters"]
    if built.get("fc1.weight") == [6, 16] and built.get("fc2.weight") == [16, 6]:
        raise Fail(t("FeedForward(d_model=6, d_ff=16): fc1 maps d_ff -> d_model and fc2 maps d_model -> d_ff"),
                   t("your fc1 and fc2 are the wrong way round: fc1 = nn.Linear(d_model, d_ff) expands, "
                     "fc2 = nn.Linear(d_ff, d_model) projects back (nn.Linear(in, out) stores its weight as (out, in))"))
    expect_structure(kit, TARGET, module=True, init=settings)


any_rank = any_leading_axes(CASES[0], (CASES[1], CASES[3]))


@check("properties", "dropout sits between the activation and fc2: with p = 1 in training the output is fc2's bias")
def dropout_place(kit):
    c = CASES[0]
    x = kit.inputs(c)[0]
    state = kit.state(c, "float64")
    got = kit.user((x,), case=c, init={**init(c), "dropout": 1.0}, train=True)
    bias = state["fc2.bias"].expand(*x.shape[:-1], c.D)
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(bias.shape):
        compare(got, bias, t("{label}: output", label=c.label), "(..., D)")  # says what is wrong with its kind or shape
    if matches(got, bias, kit.tolerance("float64")):
        return
    clean = kit.reference((x,), case=c)
    if not matches(kit.user((x,), case=c), clean, kit.tolerance("float64")):
        raise Fail(t("{label}, dropout=1.0 in training mode: the output should be fc2's bias and is not, but the "
                     "output without dropout does not match the reference either: fix that first", label=c.label))
    if matches(got, clean, kit.tolerance("float64")):
        where = t("nothing was dropped: apply self.dropout to the activations")
    elif torch.isnan(got).any():
        where = t("it came out NaN: use nn.Dropout (or F.dropout), which handles p = 1")
    elif (got == 0).all():
        where = t("the output is all zeros, so dropout acts after fc2: apply it to the activations, before fc2")
    else:
        where = t("some hidden units survived or dropout acts elsewhere: build self.dropout from the dropout "
                  "argument and apply it to the activations")
    raise Fail(t("{label}, dropout=1.0 in training mode: every hidden unit is dropped, so the output should be "
                 "fc2's bias; but {where}: fc2(dropout(act(fc1(x)))) (the interview tutorial and the PyTorch notebook tutorial)", label=c.label, where=where))


# d_ff < d_model: fc2's weight (D, d_ff) has full column rank, so the hidden units fc2 received are
# recovered exactly from its output by least squares. GELU: dropout before or after it differs.
_HIDDEN = case(6, B=2, T=5, D=9, d_ff=7, activation="gelu")
_P = 0.5


def _received(out, state, c):
    """The hidden units (N, d_ff) that fc2 received, recovered from the output; None where the output is not
    fc2(something) (a residual added, an activation after fc2): then nothing can be read off it."""
    if not isinstance(out, torch.Tensor) or out.dtype != torch.float64 or out.shape[-1:] != (c.D,) \
            or not torch.isfinite(out).all():
        return None
    w2, b2 = state["fc2.weight"], state["fc2.bias"]
    rows = (out - b2).reshape(-1, c.D)
    hidden = torch.linalg.lstsq(w2, rows.T).solution.T  # (N, d_ff)
    return hidden if matches(hidden @ w2.T, rows) else None


@check("properties", "dropout acts on the activations: each hidden unit fc2 receives is 0 or act(fc1(x)) / (1 - p)")
def dropout_on_activations(kit):
    # Compared with the hidden units of the user's own module in eval mode, so that an activation written
    # differently (a wrong GELU) is not read as a dropout mistake.
    c = _HIDDEN
    x, state = kit.inputs(c)[0], kit.state(c, "float64")
    kept = _received(kit.user((x,), case=c), state, c)
    trained = kit.user((x,), case=c, init={**init(c), "dropout": _P}, train=True)
    hidden = _received(trained, state, c)
    if kept is None:
        return  # the numerics, shapes and dropout checks say what is wrong
    if hidden is None and isinstance(trained, torch.Tensor) and trained.shape == x.shape \
            and bool(torch.isfinite(trained).all()):
        raise Fail(t("{label}, dropout={p} in training mode: your output is no longer fc2 of any hidden units (fc2's "
                     "weight times a vector, plus its bias), as it is in eval mode", label=c.label, p=_P),
                   t("dropout acts after fc2: in training mode it changes what fc2 gives back; apply it to the "
                     "activations, before fc2: fc2(dropout(act(fc1(x))))"))
    if hidden is None or hidden.shape != kept.shape:
        return
    # Dropout in the right place at another rate q keeps every surviving unit scaled by one factor 1 / (1 - q).
    alive = (hidden.abs() > 1e-7) & (kept.abs() > 1e-7)
    factors = hidden[alive] / kept[alive]
    if factors.numel() and torch.allclose(factors, factors[0].expand_as(factors), rtol=1e-6, atol=0) \
            and not math.isclose(float(factors[0]), 1 / (1 - _P), rel_tol=1e-6):
        if float(factors[0]) <= 1:
            return  # nothing dropped or scaled: the standard dropout check says that the rate has no effect
        rate = 1 - 1 / float(factors[0])
        raise Fail(t("{label}, dropout={p} in training mode: every hidden unit that survives is scaled by {factor:.6g} "
                     "= 1 / (1 - {rate:.3g}), so your dropout drops at the rate {rate:.3g}", label=c.label, p=_P,
                     factor=float(factors[0]), rate=rate),
                   t("the dropout sits in the right place, but its rate is not the dropout argument: build "
                     "self.dropout from the dropout argument, nn.Dropout(dropout)"))
    odd = ~(torch.isclose(hidden, kept / (1 - _P), atol=1e-7) | (hidden.abs() < 1e-7))
    if odd.double().mean() > 0.05:
        raise Fail(t("{label}, dropout={p} in training mode: {share:.0%} of the hidden units fc2 receives are neither 0 "
                     "nor the ones it receives in eval mode divided by (1 - p)", label=c.label, p=_P,
                     share=float(odd.double().mean())),
                   t("dropout is applied before the activation (or elsewhere): with GELU, act(dropout(h)) differs from "
                     "dropout(act(h)); apply it to the activations, fc2(dropout(act(fc1(x))))"))


# GELU's three written forms, each with its constant: 0.5·h·(1 + tanh(a·(h + b·h³))), 0.5·h·(1 + erf(h / c)) and
# h·σ(k·h). From the pairs (h, g) of a module's pre-activations and the hidden units fc2 received, each form's
# constants are solved for on the well-conditioned points and the form is kept only if it then gives every g:
# so a wrong constant is named whatever its value, and an activation of another shape is not called a GELU.
_SQRT_2_OVER_PI, _CUBIC = math.sqrt(2 / math.pi), 0.044715
_WELL_POSED = 0.05  # |h| below this, and ratios within 1% of their bounds, say too little about the constant
_FORM_ATOL = 1e-7  # g is recovered to ~1e-13; a form that fits leaves nothing above this
_KNOWN = {  # constants that other slips give, by their value
    "√(π/2)": math.sqrt(math.pi / 2), "2/π": 2 / math.pi, "√2/π": math.sqrt(2) / math.pi,
    "√(2π)": math.sqrt(2 * math.pi),
    "0.44715": 0.44715, "0.0044715": 0.0044715, "√2": math.sqrt(2), "2": 2.0, "1.702": 1.702, "1": 1.0,
}
_NAMED = {m.name: m for m in MISTAKES}


def _named(value: float) -> str:
    """The value, and the expression it equals where other slips give it: '1.25331 = √(π/2)'."""
    shown = f"{value:.6g}"
    name = next((name for name, v in _KNOWN.items() if math.isclose(value, v, rel_tol=1e-4)), shown)
    return shown if name == shown else f"{shown} = {name}"


def _gelu_forms(h, g):
    """[(form, constants, g as that form gives it)] for each written form of GELU whose constants can be solved."""
    h, g = h.reshape(-1), g.reshape(-1)
    ratio = g / torch.where(h == 0, torch.ones_like(h), h)
    forms = []
    q = 2 * ratio - 1  # tanh(a·h + a·b·h³) and erf(h / c)
    ok = (h.abs() > _WELL_POSED) & (q.abs() < 0.99)
    if ok.sum() >= 4:
        z = torch.atanh(q[ok])
        a, ab = torch.linalg.lstsq(torch.stack([h[ok], h[ok] ** 3], 1), z[:, None]).solution.reshape(-1).tolist()
        if a != 0 and abs(ab / a) > 1e-6:  # b = 0 is x·σ(2a·x), the sigmoid form below
            forms.append(("tanh", (a, ab / a), 0.5 * h * (1 + torch.tanh(a * h + ab * h ** 3))))
        w = torch.erfinv(q[ok])
        c = float((h[ok] * w).sum() / (w * w).sum())  # h = c·erfinv(q)
        if c != 0:
            forms.append(("erf", (c,), 0.5 * h * (1 + torch.erf(h / c))))
    ok = (h.abs() > _WELL_POSED) & (ratio > 0.01) & (ratio < 0.99)
    if ok.sum() >= 4:
        k = float((torch.logit(ratio[ok]) * h[ok]).sum() / (h[ok] * h[ok]).sum())  # logit(g/h) = k·h
        forms.append(("sigmoid", (k,), h * torch.sigmoid(k * h)))
    return [(form, constants, fit) for form, constants, fit in forms if torch.allclose(fit, g, rtol=0, atol=_FORM_ATOL)]


def _gelu_diagnosis(form: str, constants: tuple) -> str | None:
    """The sentence for a GELU written in form with these constants; None for the exact GELU itself."""
    close = lambda u, v: math.isclose(u, v, rel_tol=1e-4)  # noqa: E731
    if form == "tanh":
        a, b = constants
        if close(a, _SQRT_2_OVER_PI) and close(b, _CUBIC):
            return t(_NAMED["GELU tanh approximation"].explain)
        return t("your GELU is the tanh approximation 0.5·x·(1 + tanh(a·(x + b·x³))) with a = {a} and b = {b}, where "
                 "the approximation's constants are a = √(2/π) ≈ 0.797885 and b = 0.044715: a constant is miswritten, "
                 "and the kata asks for the exact GELU anyway, 0.5·x·(1 + erf(x/√2)), which is nn.GELU() and F.gelu(x)",
                 a=_named(a), b=_named(b))
    if form == "erf":
        (c,) = constants
        if close(c, math.sqrt(2)):
            return None
        if close(c, 2.0):
            return t(_NAMED["GELU erf(x/2)"].explain)
        return t("your GELU is 0.5·x·(1 + erf(x / c)) with c = {c}: the argument of erf is x/√2, c = √2 ≈ 1.41421 "
                 "(math.sqrt(2)), or use nn.GELU()", c=_named(c))
    (k,) = constants
    if close(k, 1.702):
        return t(_NAMED["GELU sigmoid approximation"].explain)
    if close(k, 1.0):
        return t(_NAMED["SiLU"].explain)
    return t("your GELU is x·σ(k·x) with k = {k}, a sigmoid approximation with its own constant: use the exact GELU, "
             "0.5·x·(1 + erf(x/√2)) (nn.GELU())", k=_named(k))


@check("numerics", "the GELU between fc1 and fc2 is the exact one, 0.5·x·(1 + erf(x/√2))")
def gelu_form(kit):
    c = _HIDDEN
    x, state = kit.inputs(c)[0], kit.state(c, "float64")
    got = kit.user((x,), case=c)
    if matches(got, kit.reference((x,), case=c), kit.tolerance("float64")):
        return
    g = _received(got, state, c)
    if g is None:
        return  # not fc2 of anything: the numerics checks say where it differs
    h = x.reshape(-1, c.D) @ state["fc1.weight"].T + state["fc1.bias"]  # (N, d_ff), the pre-activations
    if g.shape != h.shape or torch.allclose(g, F.gelu(h), rtol=0, atol=_FORM_ATOL):
        return  # the activation is right: what differs is elsewhere
    # A fact either way; a cause only where one written form of GELU, with its constants solved for, gives every g.
    worst = divmod(int((g - F.gelu(h)).abs().argmax()), c.d_ff)  # where the two activations differ most
    found = next(filter(None, (_gelu_diagnosis(form, constants) for form, constants, _ in _gelu_forms(h, g))), None)
    raise Fail(t("{label}: the hidden units fc2 receives are not GELU(fc1(x)): at h = {h:.6g} your activation gives "
                 "{got:.6g}, the exact GELU {want:.6g}", label=c.label, h=float(h[worst]), got=float(g[worst]),
                 want=float(F.gelu(h[worst]))), found)


@check("hygiene", "an unknown activation ('swish', 'silu', 'tanh', 'sigmoid') raises ValueError when the module is built")
def unknown_activation(kit):
    expect_raises([(f"FeedForward(6, 16, activation={name!r})",
                    lambda name=name: kit.inspect(TARGET, {"d_model": 6, "d_ff": 16, "dropout": 0.0, "activation": name}))
                   for name in ("swish", "silu", "tanh", "sigmoid")],
                  t("a typo such as 'gleu' would silently build and train a model with another activation"))