"""Hidden checks: Add & Norm in both orders, post-LN and pre-LN.

The user's AddNorm.forward(x, sublayer) receives a fixed sublayer from checker.checks.torch_add_norm.driver
(pickled into the child with its weights); the reference receives the same one.
"""

import torch
from torch import nn

from checker.checks.child.dropouts import Constant
from checker.checks.torch_add_norm.driver import TanhMLP, Zero
from checker.kit import (Fail, Mistake, UserError, case, check, compare, dropout_elsewhere, dropout_missing,
                         expect_structure, matches)
from checker.lang import t

TARGET = "AddNorm"
DROPOUT = True  # the constructor takes dropout: check it acts in training only
OUTPUTS = [("output", "(..., D)")]
# The norm, the dropout (in eval mode it passes the sublayer output on) and the given sublayer: the first whose
# input differs is named, and none may be called more often than the reference calls it (the sublayer once).
PARTS = ("sublayer", "norm", "dropout")

# Every dimension its own size; both orders; eps at its default and not; case 1 passes neither
# pre_norm nor eps (the defaults: post-LN, 1e-5); case 5 has no batch axis, x is (T, D).
CASES = [
    case(1, B=2, T=5, D=6, hidden=9, order="post (defaults: pre_norm and eps not passed)"),
    case(2, B=3, T=4, D=8, hidden=5, order="pre", eps=1e-5),
    case(3, B=4, T=3, D=5, hidden=7, order="post", eps=1e-6),
    case(4, B=2, T=6, D=7, hidden=4, order="pre", eps=1e-6),
    case(5, T=7, D=4, hidden=6, order="pre"),
]
TIMING = case(6, B=16, T=64, D=128, hidden=256, order="post")


def _pre(c) -> bool:
    return c.order.startswith("pre")


def init(c):
    kwargs = {"d_model": c.D, "dropout": 0.0}
    if not c.order.endswith("passed)"):
        kwargs["pre_norm"] = _pre(c)
    if "eps" in c.extra:
        kwargs["eps"] = c.eps
    return kwargs


def inputs(c, dtype, sublayer="mlp"):
    dt = getattr(torch, dtype)
    shape = [c.dims[k] for k in ("B", "T") if k in c.dims] + [c.D]
    # mean 0.5 and spread 2 per row, so the LayerNorm really moves x (norm(x) is far from x)
    x = (2.0 * torch.randn(shape, generator=c.generator(), dtype=torch.float64) + 0.5).to(dt)
    layer = TanhMLP(c.D, c.hidden, c.generator(salt=3), dt) if sublayer == "mlp" else Zero()
    return x, layer


# ----------------------------------------------------------------------------- named mistakes


def _wrong(forward, fixed_eps=None):
    """An AddNorm whose forward is forward(self, x, sublayer); fixed_eps overrides the LayerNorm's eps."""

    class Wrong(nn.Module):
        def __init__(self, d_model, pre_norm=False, dropout=0.0, eps=1e-5):
            super().__init__()
            self.pre_norm = pre_norm
            self.norm = nn.LayerNorm(d_model, eps=eps if fixed_eps is None else fixed_eps)

        def forward(self, x, sublayer):
            return forward(self, x, sublayer)

    return Wrong


def _right(m, x, s):
    return x + s(m.norm(x)) if m.pre_norm else m.norm(x + s(x))


MISTAKES = [
    Mistake("pre-LN residual from norm(x)", _wrong(lambda m, x, s: m.norm(x) + s(m.norm(x)) if m.pre_norm else _right(m, x, s)),
            "your pre-LN residual adds norm(x): the residual path carries the raw x, untouched, "
            "x + dropout(sublayer(norm(x))); only the sublayer sees norm(x)"),
    Mistake("norm on both sides", _wrong(lambda m, x, s: m.norm(x + s(m.norm(x)))),
            "your output is norm(x + sublayer(norm(x))): the LayerNorm is applied twice, on the sublayer's input AND "
            "on the sum. Post-LN normalizes only the sum, pre-LN only the sublayer's input"),
    Mistake("post-LN normalized twice", _wrong(lambda m, x, s: _right(m, x, s) if m.pre_norm else m.norm(m.norm(x + s(x)))),
            "your post-LN output is norm(norm(x + sublayer(x))): normalize the sum once"),
    Mistake("pre-LN normalized after the add", _wrong(lambda m, x, s: m.norm(x + s(m.norm(x))) if m.pre_norm else _right(m, x, s)),
            "your pre-LN output is normalized again after the residual add: pre-LN has no norm after the sum, "
            "x + dropout(sublayer(norm(x)))"),
    Mistake("norm of the sublayer output only", _wrong(lambda m, x, s: x + m.norm(s(x))),
            "your output is x + norm(sublayer(x)): the LayerNorm sits on the sublayer's output. Post-LN normalizes "
            "the SUM, norm(x + sublayer(x)); pre-LN normalizes the sublayer's INPUT, x + sublayer(norm(x))"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "AddNorm is an nn.Module with norm = nn.LayerNorm(d_model) and forward(x, sublayer)")
def structure(kit):
    try:
        expect_structure(kit, TARGET, module=True, params=["d_model", "pre_norm", "dropout", "eps"],
                         forward=["x", "sublayer"], init=init(CASES[1]))
    except Fail as fail:
        if getattr(fail.message, "values", {}).get("where") == f"{TARGET}.forward":  # forward's parameters are off
            raise Fail(fail.sentence() + t(
                ". sublayer is a callable (a module such as the attention or the FFN), not its output as in the interview "
                "tutorial's ResidualLayerNorm(x, sublayer_out): AddNorm calls it itself, on x or on norm(x)")) from None
        raise


@check("shapes", "forward calls sublayer (a callable) and returns a tensor shaped like x")
def calls_sublayer(kit):
    c = CASES[0]
    try:
        value = kit.user(kit.inputs(c), case=c)
    except UserError as err:
        if err.kind == "TypeError" and ("TanhMLP" in err.text or "Module" in err.text):
            raise Fail(t("{label}: your code raised {err}", label=c.label, err=err),
                       t("sublayer is a callable, not a tensor (the interview tutorial's ResidualLayerNorm takes the sublayer's "
                         "OUTPUT; this AddNorm takes the sublayer itself and calls it: sublayer(x) or "
                         "sublayer(self.norm(x))")) from None
        raise
    if not isinstance(value, torch.Tensor):
        raise Fail(t("{label}: forward should return a tensor (..., D), got {kind}", label=c.label,
                     kind=type(value).__name__))


def _zero_sublayer(kit, c, init_kwargs=None, train=False):
    x, zero = inputs(c, "float64", sublayer="zero")
    got = kit.user((x, zero), case=c, init=init_kwargs, train=train)
    state = kit.state(c, "float64")
    norm = nn.LayerNorm(c.D, eps=getattr(c, "eps", 1e-5)).double()
    norm.load_state_dict({k.removeprefix("norm."): v for k, v in state.items()})
    with torch.no_grad():
        want = x.clone() if _pre(c) else norm(x)
    return x, got, want


@check("properties", "with a sublayer that returns 0, pre-LN returns x itself and post-LN returns norm(x)")
def zero_sublayer(kit):
    for c in CASES[:2]:
        x, got, want = _zero_sublayer(kit, c)
        try:
            compare(got, want, "output", "(..., D)", exact=_pre(c))
        except Fail as fail:
            if _pre(c):
                raise Fail(t("{label}: {fail}. With a sublayer that returns zeros, pre-LN gives x + 0 = x exactly: "
                             "the residual path must carry the raw x, with no LayerNorm on it or after the sum",
                             label=c.label, fail=fail)) from None
            raise Fail(t("{label}: {fail}. With a sublayer that returns zeros, post-LN gives norm(x + 0) = norm(x): "
                         "add x and the sublayer's output, then normalize the sum", label=c.label, fail=fail)) from None


@check("properties", "dropout acts on the sublayer's output only: with a zero sublayer, dropout=0.5 changes nothing")
def dropout_placement(kit):
    for c in CASES[:2]:
        x, got, want = _zero_sublayer(kit, c, init_kwargs={**init(c), "dropout": 0.5}, train=True)
        if not matches(got, want):
            where = "x + dropout(sublayer(norm(x)))" if _pre(c) else "norm(x + dropout(sublayer(x)))"
            raise Fail(t("{label}, training mode, dropout=0.5, a sublayer that returns zeros: your output changes, so "
                         "dropout hits x, the sum or the normalized output. Apply it to the sublayer's output only: "
                         "{where}", label=c.label, where=where), dropout_elsewhere())


@check("properties", "dropout acts on the sublayer's output, not its input: with a sublayer that ignores its input, "
                     "dropout=0.5 still changes the result in training")
def dropout_after_the_sublayer(kit):
    for c in CASES[:2]:
        x, _ = kit.inputs(c)
        constant = Constant(torch.randn(x.shape, generator=c.generator(salt=29), dtype=torch.float64))
        trained = kit.user((x, constant), case=c, init={**init(c), "dropout": 0.5}, train=True)
        if matches(trained, kit.reference((x, constant), case=c)):
            where = "x + dropout(sublayer(norm(x)))" if _pre(c) else "norm(x + dropout(sublayer(x)))"
            raise Fail(t("{label}, training mode, dropout=0.5, a sublayer that ignores its input: your output equals the "
                         "result without dropout, so dropout acts before the sublayer (on its input) or nowhere. Apply "
                         "it to the sublayer's output: {where}", label=c.label, where=where),
                       dropout_missing())


@check("properties", "dropout acts in pre-LN too: pre_norm=True, dropout=0.5 in train mode changes the result")
def dropout_pre_ln(kit):
    c = CASES[1]
    args = kit.inputs(c)
    trained = kit.user(args, case=c, init={**init(c), "dropout": 0.5}, train=True)
    if matches(trained, kit.reference(args, case=c)):
        raise Fail(t("{label}: with dropout=0.5 in training mode the pre-LN result equals the result without "
                     "dropout: apply self.dropout to the sublayer's output in the pre-LN branch too, "
                     "x + dropout(sublayer(norm(x)))", label=c.label))
