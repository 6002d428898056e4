"""Hidden checks: NumPy position-wise feed-forward network (ReLU or tanh-approximated GELU)."""

import math
import re

import numpy as np
import torch

from checker.lang import t
from checker.kit import (ATOL_F32, expect_raises, Fail, Mistake, RTOL_F32, UserError, case, check, expect_structure, matches,
                         raised)

_TRACK = "numpy"  # no autograd checks
TARGET = "feed_forward_network"
OUTPUTS = [("output", "(..., D)")]

# The float32 defaults, named explicitly: in the float32 run the diagnosis then compares a float64
# output (a NumPy float64 constant promoted it) with float32 tolerance, so "right values, wrong
# dtype" can be named. Without this entry the float64 tolerance (1e-9) would apply to it.
TOLERANCES = {"float32": (RTOL_F32, ATOL_F32)}

# Every dimension its own size (d_ff is never d_model, so x @ W.T or W1/W2 swapped cannot run by
# coincidence), rank 3 and rank 2, both activations, and one call that relies on the default.
CASES = [
    case(1, B=2, T=5, d_model=6, d_ff=10, activation="relu"),
    case(2, B=3, T=4, d_model=8, d_ff=12, activation="gelu"),
    case(3, N=7, d_model=5, d_ff=9, activation="gelu"),
    case(4, N=6, d_model=4, d_ff=11, activation="default (relu)"),
]


def _lead(c) -> tuple:
    return (c.B, c.T) if "B" in c.dims else (c.N,)


def inputs(c, dtype):
    """x and weights scaled so the hidden pre-activations spread over about [-3, 3]: both signs matter."""
    g = c.generator()

    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale).numpy().astype(dtype)

    x = randn(*_lead(c), c.d_model)
    W1, b1 = randn(c.d_model, c.d_ff, scale=1.2 / math.sqrt(c.d_model)), randn(c.d_ff, scale=0.5)
    W2, b2 = randn(c.d_ff, c.d_model, scale=1.0 / math.sqrt(c.d_ff)), randn(c.d_model, scale=0.5)
    args = (x, W1, b1, W2, b2)
    return args if c.activation.startswith("default") else args + (c.activation,)


# ----------------------------------------------------------------------------- named mistakes


def _gelu_tanh(h, scale=math.sqrt(2 / math.pi), cubic=0.044715, power=3):
    return 0.5 * h * (1.0 + np.tanh(scale * (h + cubic * h**power)))


def _gelu_erf(h):
    erf = np.vectorize(math.erf, otypes=[h.dtype])
    return 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))


_ACTS = {
    "relu": lambda h: np.maximum(h, 0),
    "gelu": _gelu_tanh,
    "gelu erf": _gelu_erf,
    "gelu 0.0447": lambda h: _gelu_tanh(h, cubic=0.0447),
    "gelu no cube": lambda h: _gelu_tanh(h, power=1),
    "gelu no sqrt": lambda h: _gelu_tanh(h, scale=2 / math.pi),
    "gelu sigmoid": lambda h: h / (1.0 + np.exp(-1.702 * h)),
    "gelu bracket": lambda h: 0.5 * h * (1.0 + np.tanh(math.sqrt(2 / math.pi) * h + 0.044715 * h**3)),
    "gelu no x": lambda h: 0.5 * (1.0 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3))),
    "gelu sqrt 2pi": lambda h: _gelu_tanh(h, scale=math.sqrt(2 * math.pi)),
}


def ffn(x, W1, b1, W2, b2, activation="relu", *, gelu="gelu", force=None, bias_after=False, act_out=False,
        no_b1=False, no_b2=False, residual=False, act_hidden=True):
    """The network with knobs; every knob at its default gives the right answer."""
    name = force or activation
    act = _ACTS[gelu if name == "gelu" else name]
    h = act(x @ W1) + b1 if bias_after else act(x @ W1 + (0 if no_b1 else b1)) if act_hidden else x @ W1 + b1
    out = h @ W2 + (0 if no_b2 else b2)
    return x + out if residual else act(out) if act_out else out


def _variant(default="relu", **knobs):
    return lambda x, W1, b1, W2, b2, activation=default: ffn(x, W1, b1, W2, b2, activation, **knobs)


MISTAKES = [
    Mistake("float64 out for float32 in", lambda x, W1, b1, W2, b2, activation="relu": ffn(
        *(a.astype(np.float64) for a in (x, W1, b1, W2, b2)), activation),
            "your values are right but float32 inputs give a float64 output: np.sqrt(2 / np.pi) and np.pi-based "
            "constants are NumPy float64 scalars, which NumPy 2 does not demote; use math.sqrt(2 / math.pi) "
            "(a Python float) so float32 stays float32"),
    Mistake("activation after the second layer too", _variant(act_out=True),
            "your output equals the network with the activation applied after the second layer as well: "
            "FFN(x) = act(x @ W1 + b1) @ W2 + b2, nothing after the last + b2"),
    Mistake("activation ignored: always GELU", _variant(force="gelu"),
            "your output equals the GELU network although ReLU was asked for: pick the activation from the "
            "argument, and make activation='relu' the default"),
    Mistake("exact erf GELU", _variant(gelu="gelu erf"),
            "your GELU is the exact erf form 0.5·h·(1 + erf(h/√2)): this kata asks for the tanh approximation "
            "0.5·h·(1 + tanh(√(2/π)·(h + 0.044715·h³))), F.gelu(approximate='tanh'); the two differ by up to about 5e-4"),
    Mistake("GELU constant 0.0447", _variant(gelu="gelu 0.0447"),
            "your GELU uses 0.0447: the constant is 0.044715"),
    Mistake("GELU without the square root", _variant(gelu="gelu no sqrt"),
            "your GELU scales by 2/π: the factor is its square root, math.sqrt(2 / math.pi) ≈ 0.7979"),
    Mistake("sigmoid GELU", _variant(gelu="gelu sigmoid"),
            "your GELU is the sigmoid approximation h·σ(1.702·h): this kata asks for the tanh approximation "
            "0.5·h·(1 + tanh(√(2/π)·(h + 0.044715·h³)))"),
    Mistake("GELU bracket misplaced", _variant(gelu="gelu bracket"),
            "your GELU is tanh(√(2/π)·x + 0.044715·x³): the √(2/π) multiplies the whole bracket, "
            "tanh(√(2/π)·(x + 0.044715·x³))"),
    Mistake("GELU with √(2π)", _variant(gelu="gelu sqrt 2pi"),
            "your GELU uses √(2π): the constant is √(2/π) ≈ 0.798, math.sqrt(2 / math.pi)"),
    Mistake("residual inside", _variant(residual=True),
            "your output is x + FFN(x): the residual connection belongs to the sublayer around the feed-forward "
            "network (AddNorm), which adds it; return fc2(act(fc1(x))) alone"),
    Mistake("activation after the second layer only", _variant(act_hidden=False, act_out=True),
            "your activation is applied to the output instead of the hidden layer: act(x @ W1 + b1) @ W2 + b2"),
    Mistake("bias after the activation", _variant(bias_after=True),
            "your output equals act(x @ W1) + b1 ...: add b1 before the activation, act(x @ W1 + b1)"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "feed_forward_network is a function taking (x, W1, b1, W2, b2, activation)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["x", "W1", "b1", "W2", "b2", "activation"])


def _probe(kit, args, expected) -> bool:
    """True when the user's code, given these rearranged weights, returns the right output."""
    try:
        return matches(kit.user(args), expected)
    except UserError:
        return False


@check("shapes", "x @ W1 (D, F), then @ W2 (F, D): every case runs and keeps x's shape")
def weight_layout(kit):
    for c in CASES:
        args = inputs(c, "float64")
        x, W1, b1, W2, b2, *rest = args
        try:
            got = kit.user(args)
        except UserError as err:
            if err.not_implemented or not re.search(r"mismatch|not aligned|broadcast", err.text):
                raise
            expected = kit.reference(args)
            layout = t("W1 is (d_model, d_ff) = {w1} and W2 is (d_ff, d_model) = {w2}, stored (in, out) as in the NumPy tutorial",
                       w1=W1.shape, w2=W2.shape)
            if _probe(kit, (x, np.ascontiguousarray(W1.T), b1, np.ascontiguousarray(W2.T), b2, *rest), expected):
                why = t("you multiply by the transposed weights, x @ W.T (nn.Linear's (out, in) layout): {layout}, so "
                        "compute x @ W1 and hidden @ W2", layout=layout)
            elif _probe(kit, (x, W2, b1, W1, b2, *rest), expected):
                why = t("you use W2 in the first layer and W1 in the second: {layout}, so compute x @ W1 + b1 first, then "
                        "hidden @ W2 + b2", layout=layout)
            else:
                why = t("{layout}: x (..., d_model) @ W1 gives (..., d_ff), (+ b1 of d_ff), then @ W2 gives "
                        "(..., d_model) (+ b2)", layout=layout)
            raise raised(c.label, err, why) from None
        if not isinstance(got, np.ndarray) or got.shape != x.shape:
            shape = got.shape if isinstance(got, np.ndarray) else t("a {kind}", kind=type(got).__name__)
            hint = t("an axis was reduced away: ReLU is np.maximum(h, 0), elementwise, while np.max(h, 0) takes the "
                     "maximum over axis 0") if isinstance(got, np.ndarray) and got.shape == x.shape[1:] else None
            raise Fail(t("{label}: output should be a NumPy array of x's shape (..., D) = {want}, got {got}",
                         label=c.label, want=x.shape, got=shape), hint)


@check("properties", "each position is transformed on its own (position-wise)")
def position_wise(kit):
    # Property only: changing position t of x changes row t of the output and no other row.
    c = CASES[1]
    args = inputs(c, "float64")
    x = args[0]
    changed = x.copy()
    changed[:, 2] += 1.0
    before, after = kit.user(args), kit.user((changed, *args[1:]))
    for got in (before, after):
        if not isinstance(got, np.ndarray) or got.shape != x.shape:
            raise Fail(t("{label}: the output should be a NumPy array of x's shape (B, T, D) = {want} first",
                         label=c.label, want=x.shape))
    for pos in range(c.T):
        if pos != 2 and not np.array_equal(before[:, pos], after[:, pos]):
            raise Fail(t("{label}: changing x at position 2 changed your output at position {pos}: the FFN mixes "
                         "nothing across positions, it only multiplies the last axis (d_model) by W1 and W2",
                         label=c.label, pos=pos))


@check("properties", "an unknown activation ('swish') raises ValueError")
def unknown_activation(kit):
    args = inputs(CASES[0], "float64")[:5] + ("swish",)
    expect_raises([("feed_forward(..., activation='swish')", lambda: kit.user(args))],
                  t("a typo such as 'gleu' would silently pick an activation"))