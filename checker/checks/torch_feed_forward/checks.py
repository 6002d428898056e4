"""Hidden checks: PyTorch position-wise feed-forward network (ReLU or GELU)."""

import torch
import torch.nn.functional as F
from torch import nn

from checker.kit import Accepted, Fail, Mistake, UserError, any_leading_axes, case, check, compare, expect_structure, matches
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
                 "fc2's bias; but {where}: fc2(dropout(act(fc1(x)))) (seeds 003 and 004)", label=c.label, where=where))


# d_ff < d_model: fc2's weight (D, d_ff) has full column rank, so the hidden units fc2 received are
# recovered exactly from its output by least squares. GELU: dropout before or after it differs.
_HIDDEN = case(6, B=2, T=5, D=9, d_ff=7, activation="gelu")
_P = 0.5


@check("properties", "dropout acts on the activations: each hidden unit fc2 receives is 0 or act(fc1(x)) / (1 - p)")
def dropout_on_activations(kit):
    c = _HIDDEN
    x, state = kit.inputs(c)[0], kit.state(c, "float64")
    got = kit.user((x,), case=c, init={**init(c), "dropout": _P}, train=True)
    if not isinstance(got, torch.Tensor) or got.shape != x.shape or not torch.isfinite(got).all():
        return  # the shapes and dropout checks say what is wrong
    w1, b1, w2, b2 = (state[k] for k in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"))
    hidden = torch.linalg.lstsq(w2, (got - b2).reshape(-1, c.D).T).solution.T  # (N, d_ff) that fc2 received
    kept = F.gelu(x.reshape(-1, c.D) @ w1.T + b1) / (1 - _P)  # (N, d_ff)
    odd = ~(torch.isclose(hidden, kept, atol=1e-7) | (hidden.abs() < 1e-7))
    if odd.double().mean() > 0.05:
        raise Fail(t("{label}, dropout={p} in training mode: {share:.0%} of the hidden units fc2 receives are neither 0 "
                     "nor act(fc1(x)) / (1 - p)", label=c.label, p=_P, share=float(odd.double().mean())),
                   t("dropout is applied before the activation (or elsewhere): with GELU, act(dropout(h)) differs from "
                     "dropout(act(h)); apply it to the activations, fc2(dropout(act(fc1(x))))"))


@check("hygiene", "an unknown activation ('swish', 'silu', 'tanh', 'sigmoid') raises ValueError when the module is built")
def unknown_activation(kit):
    asserted = False
    for name in ("swish", "silu", "tanh", "sigmoid"):
        settings = {"d_model": 6, "d_ff": 16, "dropout": 0.0, "activation": name}
        try:
            kit.inspect(TARGET, settings)
        except UserError as err:
            if err.not_implemented:
                raise
            if err.kind == "AssertionError":
                asserted = True
            elif err.kind != "ValueError":
                raise Fail(t("FeedForward(6, 16, activation={name}) raised {err}: raise ValueError for an "
                             "activation other than 'relu' or 'gelu'", name=repr(name), err=err)) from None
            continue
        raise Fail(t("FeedForward(6, 16, activation={name}) was built without complaint", name=repr(name)),
                   t("your __init__ accepts any activation: raise ValueError for an activation other than 'relu' or "
                     "'gelu', so a typo cannot silently train with the wrong activation (seed 003: "
                     "raise ValueError('activation must be relu or gelu'))"))
    if asserted:
        raise Accepted(t("an `assert` was recognised (AssertionError) where this kata's reference raises ValueError: "
                         "it stops the same wrong call, but asserts vanish under `python -O`, and then a typo such as "
                         "'gleu' would silently build a model"))
