"""Hidden checks: one Muon step, Nesterov momentum, Newton–Schulz orthogonalisation and the shape scale (Keller
Jordan's Muon)."""

import torch

from checker.kit import (FLOAT32_INSIDE, FLOAT32_INTERNALS, Accepted, Convention, Fail, Mistake, case, check, compare,
                         expect_raises, expect_structure, matches)
from checker.lang import t

TARGET = "muon_step"
OUTPUTS = [("new_param", "(rows, cols)"), ("new_buf", "(rows, cols)")]
GRADIENTS = False  # an optimizer step

# Every dimension its own size: wide, tall (the transposed iteration and the scale √(rows/cols)), square without
# Nesterov, and three iterations instead of five. Gradients and the buffer at a trained model's scale (0.01·randn):
# an update whose singular values are far below 1, where the normalisation matters; the parameter ~ randn.
CASES = [
    case(1, rows=8, cols=12, lr=0.02, momentum=0.95, nesterov=True, ns_steps=5),
    case(2, rows=12, cols=5, lr=0.05, momentum=0.9, nesterov=True, ns_steps=5),
    case(3, rows=7, cols=7, lr=0.1, momentum=0.95, nesterov=False, ns_steps=5),
    case(4, rows=6, cols=16, lr=0.02, momentum=0.8, nesterov=True, ns_steps=3),
]
TIMING = case(5, rows=256, cols=1024, lr=0.02, momentum=0.95, nesterov=True, ns_steps=5)


def inputs(c, dtype):
    g = c.generator(salt=1)
    d = getattr(torch, dtype)
    param = torch.randn(c.rows, c.cols, generator=g, dtype=torch.float64)
    grad = 0.01 * torch.randn(c.rows, c.cols, generator=g, dtype=torch.float64)
    buf = 0.01 * torch.randn(c.rows, c.cols, generator=g, dtype=torch.float64)
    return param.to(d), grad.to(d), buf.to(d), c.lr, c.momentum, c.nesterov, c.ns_steps


# newton_schulz on its own: wide, tall and square matrices of unit-scale entries; five steps, two and none.
_NS_CASES = [case(11, rows=5, cols=9, steps=5), case(12, rows=10, cols=4, steps=5), case(13, rows=6, cols=6, steps=2),
              case(14, rows=3, cols=8, steps=0)]  # no iteration: the normalised matrix


def _ns_inputs(c, dtype):
    return torch.randn(c.rows, c.cols, generator=c.generator(salt=2), dtype=torch.float64).to(getattr(torch, dtype)), \
        c.steps


# ----------------------------------------------------------------------------- the original's conventions


def _iterate(G, steps=5, eps=1e-7, *, dtype=None, coefficients=(3.4445, -4.7750, 2.0315)):
    a, b, c = coefficients
    X = G.to(dtype) if dtype is not None else G
    tall = G.size(-2) > G.size(-1)
    if tall:
        X = X.mT
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + eps)
    for _ in range(steps):
        A = X @ X.mT
        B = b * A + c * A @ A
        X = a * X + B @ X
    return X.mT if tall else X


def _step(param, grad, buf, lr=0.02, momentum=0.95, nesterov=True, ns_steps=5, *, ema=False, **ns):
    if ema:  # Keller Jordan's current muon_update: momentum.lerp_(grad, 1 - beta); grad.lerp_(momentum, beta)
        buf = buf + (1 - momentum) * (grad - buf)
        update = grad + momentum * (buf - grad) if nesterov else buf
    else:
        buf = momentum * buf + grad
        update = grad + momentum * buf if nesterov else buf
    O = _iterate(update, ns_steps, **ns)
    O = O * max(1, param.size(-2) / param.size(-1)) ** 0.5
    return param - (lr * O).to(param.dtype), buf


def _variant(**knobs):
    def run(param, grad, buf, lr=0.02, momentum=0.95, nesterov=True, ns_steps=5):
        return _step(param, grad, buf, lr, momentum, nesterov, ns_steps, **knobs)

    return run


# Keller Jordan's current momentum, in the parameter's dtype or with float32 internals (his iteration casts to
# bfloat16, which moves the new parameter by up to 0.08·lr on these cases, as much as some mistakes: not accepted).
CONVENTIONS = (
    Convention("Keller Jordan's EMA momentum", (
        "your momentum is the exponential moving average of Keller Jordan's current muon_update, buf.lerp_(grad, "
        "1 - momentum) and the Nesterov update grad.lerp_(buf, momentum), which is (1 - momentum) times this kata's "
        "buf = momentum·buf + grad and g + momentum·buf (modded-nanogpt's first Muon). Newton–Schulz normalises its "
        "input, so the step is the same up to eps; only the buffer differs by that factor, and your form was "
        "allowed (to float32's precision) for every later check"), impl=_variant(ema=True), tol=FLOAT32_INSIDE),
)

# ----------------------------------------------------------------------------- named mistakes
# One the error model cannot write: the cubic Newton–Schulz iteration changes all three coefficients at once.

MISTAKES = [
    Mistake("the cubic Newton–Schulz iteration", _variant(coefficients=(1.5, -0.5, 0.0)),
            "your iteration is the classic cubic Newton–Schulz, X <- 1.5·X - 0.5·X Xᵀ X: it converges to the "
            "orthogonal factor, but slowly from the small singular values a gradient has (σ grows by 1.5× per "
            "step). Muon's quintic uses (a, b, c) = (3.4445, -4.7750, 2.0315): σ -> aσ + bσ³ + cσ⁵ grows small "
            "singular values by 3.4445× per step, so five steps are enough"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "newton_schulz(G, steps, eps) and muon_step(param, grad, buf, lr, momentum, nesterov, ns_steps) "
                    "are functions")
def structure(kit):
    expect_structure(kit, "newton_schulz", module=False, params=["G", "steps", "eps"])
    expect_structure(kit, TARGET, module=False,
                     params=["param", "grad", "buf", "lr", "momentum", "nesterov", "ns_steps"])


@check("numerics", "newton_schulz: the quintic iteration on the normalised matrix, wide, tall and square (float64 and "
                   "float32)")
def newton_schulz(kit):
    inside = []  # float64 cases right to float32's precision only
    for dtype in ("float64", "float32"):
        for c in _NS_CASES:
            args = _ns_inputs(c, dtype)
            got = kit.user(args, target="newton_schulz")
            want = kit.reference(args, target="newton_schulz")
            if dtype == "float64" and matches(got, want, FLOAT32_INSIDE) and not matches(got, want):
                inside.append(c)
                continue
            try:
                compare(got, want, "X", "(rows, cols)")
            except Fail as fail:
                found = None
                if isinstance(got, torch.Tensor) and got.shape == want.shape and got.dtype == want.dtype:
                    found = kit.name_mistake(args, got, tol=kit.tolerance(dtype), target="newton_schulz")
                raise Fail(t("{label}, {dtype}: {fail}", label=c.label, dtype=dtype, fail=fail.message),
                           found) from None
    if inside:
        raise Accepted(t(FLOAT32_INTERNALS.explain))


@check("properties", "newton_schulz orthogonalises: the singular values of its output lie in [0.6, 1.2]")
def orthogonalises(kit):
    c = _NS_CASES[1]
    G, _ = _ns_inputs(c, "float64")
    got = kit.user((G, 5), target="newton_schulz")
    if not isinstance(got, torch.Tensor) or got.shape != G.shape or not got.is_floating_point():
        return  # the newton_schulz check reports it
    s = torch.linalg.svdvals(got.to(torch.float64))
    if not bool(torch.isfinite(s).all()) or bool((s < 0.6).any()) or bool((s > 1.2).any()):
        raise Fail(t("{label}: the singular values of newton_schulz(G, 5) are {values}", label=c.label,
                     values=[round(v, 3) for v in s.tolist()]),
                   t("Newton–Schulz should send every singular value of the normalised G towards 1 (Muon's quintic "
                     "leaves them in about [0.7, 1.2]): normalise by the Frobenius norm first, so that they start at "
                     "most 1, then apply X <- a·X + (b·A + c·A·A)·X with A = X Xᵀ and (a, b, c) = (3.4445, -4.7750, "
                     "2.0315)"))


@check("numerics", "muon_step: the defaults are lr=0.02, momentum=0.95, nesterov=True, ns_steps=5 (Keller Jordan's)")
def defaults(kit):
    c = CASES[0]
    args = inputs(c, "float64")[:3]
    got, explicit = kit.user(args), kit.user(args + (0.02, 0.95, True, 5))
    for (name, legend), u, w in zip(OUTPUTS, got if isinstance(got, (tuple, list)) else (got,),
                                    explicit if isinstance(explicit, (tuple, list)) else (explicit,)):
        if isinstance(u, torch.Tensor) and isinstance(w, torch.Tensor) and not matches(u, w):
            raise Fail(t("{label}: muon_step(param, grad, buf) and muon_step(param, grad, buf, lr=0.02, momentum=0.95, "
                         "nesterov=True, ns_steps=5) give different {name}: the defaults are Keller Jordan's, "
                         "lr=0.02, momentum=0.95, nesterov=True and ns_steps=5", label=c.label, name=name))


@check("properties", "muon_step and newton_schulz raise ValueError for a parameter that is not 2-D")
def not_a_matrix(kit):
    bias = torch.randn(6, dtype=torch.float64)
    conv = torch.randn(4, 3, 2, dtype=torch.float64)
    expect_raises([("muon_step(bias, grad, buf) with a (6,) bias", lambda: kit.user((bias, bias, bias))),
                   ("muon_step(w, grad, buf) with a (4, 3, 2) tensor", lambda: kit.user((conv, conv, conv))),
                   ("newton_schulz(bias) with a (6,) tensor", lambda: kit.user((bias,), target="newton_schulz"))],
                  t("a vector has no orthogonal factor to speak of (Newton–Schulz on a 1 × n matrix just normalises "
                    "it), so a bias or a norm's gain silently gets a step of the wrong size; Muon's setups hand them "
                    "to AdamW"))
