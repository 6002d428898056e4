"""Hidden checks: SwiGLU feed-forward network (LLaMA) from scratch."""

import torch
import torch.nn.functional as F
from torch import nn

from checker.kit import Fail, Mistake, any_leading_axes, case, check, compare, expect_structure, matches
from checker.lang import t

TARGET = "SwiGLU"
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
OUTPUTS = [("output", "(..., D)")]

# Every dimension its own size; with and without biases; inputs of rank 3, 2 and 4, so code that
# unpacks B, T, D = x.shape fails; one case with d_ff < d_model, so nothing assumes an expansion.
CASES = [
    case(1, B=2, T=5, D=6, d_ff=16, bias=False),
    case(2, T=7, D=4, d_ff=10, bias=True),
    case(3, B=3, T=4, D=8, d_ff=12, bias=False),
    case(4, B=2, N=3, T=5, D=9, d_ff=7, bias=True),
]
TIMING = case(5, B=16, T=128, D=256, d_ff=688, bias=False)  # 688 = 2/3 · 4 · 256 rounded up to 16


def init(c):
    return {"d_model": c.D, "d_ff": c.d_ff, "bias": c.bias}


def inputs(c, dtype):
    shape = [c.dims[k] for k in ("B", "N", "T") if k in c.dims] + [c.D]
    # spread 1.5: the gate pre-activations reach ±3, where SiLU, GELU and sigmoid differ most
    return (1.5 * torch.randn(shape, generator=c.generator(), dtype=torch.float64).to(getattr(torch, dtype)),)


# ----------------------------------------------------------------------------- named mistakes


def _variant(combine, *, use_bias=True):
    """combine(g, u) -> hidden, from g = W_gate(x) and u = W_up(x); the right one is silu(g) * u."""

    class Wrong(nn.Module):
        def __init__(self, d_model, d_ff, bias=False):
            super().__init__()
            self.W_gate = nn.Linear(d_model, d_ff, bias=bias)
            self.W_up = nn.Linear(d_model, d_ff, bias=bias)
            self.W_down = nn.Linear(d_ff, d_model, bias=bias)

        def forward(self, x):
            if use_bias:
                return self.W_down(combine(self.W_gate(x), self.W_up(x)))
            g, u = F.linear(x, self.W_gate.weight), F.linear(x, self.W_up.weight)
            return F.linear(combine(g, u), self.W_down.weight)

    return Wrong


MISTAKES = [
    Mistake("gate and up swapped", _variant(lambda g, u: g * F.silu(u)),
            "your output equals W_down(W_gate(x) * silu(W_up(x))): SiLU is on the wrong branch. The gate is "
            "W_gate (LLaMA's w1): W_down(silu(W_gate(x)) * W_up(x))"),
    Mistake("SiLU sign flipped", _variant(lambda g, u: g * torch.sigmoid(-g) * u),
            "your gate is x · σ(-x), i.e. x / (1 + exp(x)): SiLU is x · σ(x) = x / (1 + exp(-x)), mind the sign"),
    Mistake("Swish with beta 1.702", _variant(lambda g, u: g * torch.sigmoid(1.702 * g) * u),
            "your gate is x · σ(1.702x), the sigmoid approximation of GELU: SwiGLU's gate is SiLU, x · σ(x) "
            "(F.silu)"),
    Mistake("W_up in both branches", _variant(lambda g, u: F.silu(u) * u),
            "your gate reads W_up (a copy-paste slip): the gate is silu(W_gate(x)), the linear branch W_up(x)"),
    Mistake("W_gate in both branches", _variant(lambda g, u: F.silu(g) * g),
            "your linear branch reads W_gate (a copy-paste slip): the gate is silu(W_gate(x)), the linear "
            "branch W_up(x)"),
    Mistake("sigmoid instead of SiLU", _variant(lambda g, u: torch.sigmoid(g) * u),
            "your output equals W_down(sigmoid(W_gate(x)) * W_up(x)): that is GLU (Dauphin et al.), not SwiGLU. "
            "SiLU is h · sigmoid(h): use F.silu(W_gate(x))"),
    Mistake("GELU instead of SiLU", _variant(lambda g, u: F.gelu(g) * u),
            "your output equals W_down(gelu(W_gate(x)) * W_up(x)): that is GEGLU. SwiGLU's gate is SiLU, "
            "h · sigmoid(h): use F.silu"),
    Mistake("ReLU instead of SiLU", _variant(lambda g, u: F.relu(g) * u),
            "your output equals W_down(relu(W_gate(x)) * W_up(x)): that is ReGLU. SwiGLU's gate is SiLU, "
            "h · sigmoid(h): use F.silu"),
    Mistake("SiLU after the product", _variant(lambda g, u: F.silu(g * u)),
            "your output equals W_down(silu(W_gate(x) * W_up(x))): SiLU acts on the gate alone, before the "
            "product: W_down(silu(W_gate(x)) * W_up(x))"),
    Mistake("SiLU on both branches", _variant(lambda g, u: F.silu(g) * F.silu(u)),
            "your output equals W_down(silu(W_gate(x)) * silu(W_up(x))): the up branch stays linear, "
            "W_down(silu(W_gate(x)) * W_up(x))"),
    Mistake("no gate: plain FFN on W_up", _variant(lambda g, u: F.silu(u)),
            "your output equals W_down(silu(W_up(x))), a plain two-layer FFN: W_gate is never used. "
            "W_down(silu(W_gate(x)) * W_up(x))"),
    Mistake("sum instead of product", _variant(lambda g, u: F.silu(g) + u),
            "your output equals W_down(silu(W_gate(x)) + W_up(x)): the gate MULTIPLIES the linear branch "
            "elementwise, silu(W_gate(x)) * W_up(x)"),
    Mistake("biases ignored", _variant(lambda g, u: F.silu(g) * u, use_bias=False),
            "your output ignores the biases (bias=True was passed): call the nn.Linear modules, "
            "self.W_gate(x), rather than x @ self.W_gate.weight.T"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "SwiGLU is an nn.Module with W_gate, W_up = Linear(d_model, d_ff) and W_down = Linear(d_ff, d_model)")
def structure(kit):
    expect_structure(kit, TARGET, module=True, params=["d_model", "d_ff", "bias"], forward=["x"])
    for bias in (False, True):
        settings = {"d_model": 6, "d_ff": 16, "bias": bias}
        built = kit.inspect(TARGET, settings)["parameters"]
        if built.get("W_down.weight") == [16, 6] or built.get("W_gate.weight") == [6, 16]:
            raise Fail(t("SwiGLU(d_model=6, d_ff=16): a Linear goes the wrong way"),
                       t("W_gate = nn.Linear(d_model, d_ff) and W_up likewise expand, W_down = nn.Linear(d_ff, d_model) "
                         "projects back (nn.Linear(in, out) stores its weight as (out, in))"))
        if not bias and any(n.endswith(".bias") for n in built):
            raise Fail(t("SwiGLU(6, 16, bias=False) has bias parameters ({names})",
                         names=', '.join(n for n in built if n.endswith('.bias'))),
                       t("your Linears ignore the bias argument: pass bias=bias to every nn.Linear; LLaMA's "
                         "feed-forward has no biases"))
        if bias and not any(n.endswith(".bias") for n in built):
            raise Fail(t("SwiGLU(6, 16, bias=True) has no bias parameters"),
                       t("your Linears ignore the bias argument: pass bias=bias to every nn.Linear"))
        expect_structure(kit, TARGET, module=True, init=settings)


any_rank = any_leading_axes(CASES[0], (CASES[1], CASES[3]))


def _run_with(kit, c, edit):
    """The user's output with the case's weights edited by edit(state), and without the edit."""
    x = kit.inputs(c)
    state = kit.state(c, "float64")
    edit(state)
    got, base = kit.user(x, case=c, state=state), kit.user(x, case=c)
    want = kit.reference(x, case=c)
    for value in (got, base):
        if not isinstance(value, torch.Tensor) or value.shape != want.shape or value.dtype != want.dtype:
            compare(value, want, t("{label}: output", label=c.label), "(..., D)")  # says what is wrong with its kind, shape or dtype
    return got, base


@check("properties", "a closed gate (W_gate = 0) gives silu(0) = 0 hidden units and a zero output")
def closed_gate(kit):
    c = CASES[0]  # no biases: a closed gate gives exactly 0

    def close(state):
        state["W_gate.weight"].zero_()

    got, base = _run_with(kit, c, close)
    if matches(got, torch.zeros_like(got)):
        return
    if matches(got, base):
        why = t("your output did not change when W_gate was zeroed: is W_gate used at all?")
    else:
        why = t("the gate does not close: silu(0) = 0 · sigmoid(0) = 0, while sigmoid(0) = 0.5, and a plain FFN or a "
                "gate on the wrong branch lets W_up through")
    raise Fail(t("{label}, W_gate's weight set to 0: the hidden units are silu(0) · W_up(x) = 0, so the output should "
                 "be 0; {why}. SwiGLU(x) = W_down(silu(W_gate(x)) * W_up(x))", label=c.label, why=why))


@check("properties", "the up branch is linear: doubling W_up doubles the output (no biases)")
def linear_up_branch(kit):
    c = CASES[2]  # no biases: the output is linear in W_up

    def double(state):
        state["W_up.weight"].mul_(2)

    got, base = _run_with(kit, c, double)
    if matches(got, 2 * base):
        return
    raise Fail(t("{label}, W_up's weight doubled: W_up(x) doubles, and since the up branch is not activated the "
                 "hidden units and the output should double too, and they do not: the up branch stays linear, only the "
                 "gate goes through SiLU, W_down(silu(W_gate(x)) * W_up(x))", label=c.label))
