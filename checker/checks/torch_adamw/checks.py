"""Hidden checks: one AdamW step by hand, adamw_step(param, grad, exp_avg, exp_avg_sq, step, ...).

The standard checks compare one step from given states (the three outputs, float64 and float32,
arguments unchanged). The loop check then drives one parameter for several steps on a quadratic
loss, in the child, and compares every step with torch's own AdamW update
(torch.optim.adamw.adamw, the function torch.optim.AdamW.step runs; checker/checks/torch_adamw/test_reference.py
holds the reference equal to the optimizer itself).
"""

import math

import torch
from torch.optim.adamw import adamw as torch_adamw

from checker.checks.torch_adamw.driver import adamw_loop
from checker.kit import Accepted, Convention, Fail, Mistake, case, check, compare, expect_structure, matches
from checker.lang import t

TARGET = "adamw_step"
OUTPUTS = [("param", "(...)"), ("exp_avg", "(...)"), ("exp_avg_sq", "(...)")]
GRADIENTS = False  # an optimizer step is not differentiated

# Every dimension its own size; parameters of rank 1, 2 and 3. Each case separates mistakes:
# 1 torch's defaults (only the five tensors passed) at step 1 from zero moments; 2 a large eps next
# to tiny gradients and moments (eps inside or outside the root differ by 30x); 3 weight_decay = 0
# (AdamW is Adam) at step 10; 4 a large lr · λ = 0.1, so decay before or after the update differ
# by lr · λ · lr · |update| ≈ 0.02. Steps 1, 3, 10, 2: bias correction matters at every one.
CASES = [
    case(1, P=7, step=1, hyper="default", state="zeros"),
    case(2, R=3, P=5, step=3, lr=0.1, beta1=0.8, beta2=0.95, eps=1e-3, weight_decay=0.1, state="tiny"),
    case(3, R=4, P=2, Q=3, step=10, lr=0.05, beta1=0.9, beta2=0.99, eps=1e-6, weight_decay=0.0, state="normal"),
    case(4, P=6, step=2, lr=0.2, beta1=0.5, beta2=0.9, eps=1e-8, weight_decay=0.5, state="normal"),
]
TIMING = case(5, R=512, P=1024, step=100, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01,
              state="normal")
# The loop: a (4, 3) parameter, 5 steps, lr · λ = 0.02, a large eps and momentum settings of their own.
_LOOP = case(6, R=4, P=3, steps=5, lr=0.1, beta1=0.85, beta2=0.98, eps=1e-4, weight_decay=0.2, curvature=2)
_DEFAULTS = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 1e-2}  # torch.optim.AdamW's


def _shape(c):
    return [c.dims[k] for k in ("R", "P", "Q") if k in c.dims]


def _hyper(c):
    if getattr(c, "hyper", None) == "default":
        return dict(_DEFAULTS)
    return {"lr": c.lr, "betas": (c.beta1, c.beta2), "eps": c.eps, "weight_decay": c.weight_decay}


def inputs(c, dtype):
    g = c.generator()
    shape, d = _shape(c), getattr(torch, dtype)
    param = torch.randn(shape, generator=g, dtype=torch.float64)
    grad = torch.randn(shape, generator=g, dtype=torch.float64)
    m = torch.randn(shape, generator=g, dtype=torch.float64) * 0.1
    v = torch.rand(shape, generator=g, dtype=torch.float64) * 0.05 + 0.01
    if c.state == "zeros":
        m, v = m * 0, v * 0
    elif c.state == "tiny":  # tiny gradients and second moments, comparable to eps = 1e-3 once rooted
        grad, m, v = grad * 1e-3, m * 1e-3, v * 1e-5
    tensors = tuple(x.to(d) for x in (param, grad, m, v))
    if getattr(c, "hyper", None) == "default":
        return tensors + (c.step,)
    h = _hyper(c)
    return tensors + (c.step, h["lr"], h["betas"], h["eps"], h["weight_decay"])


# ----------------------------------------------------------------------------- named mistakes


def _variant(decay="decoupled", correct="both", eps_at="outside", root=True, step_from=1, betas_swapped=False,
             decay_lr=True, returns="moments", square=True):
    """adamw_step with knobs; every knob at its default gives the right answer."""

    def step_fn(param, grad, exp_avg, exp_avg_sq, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        beta1, beta2 = reversed(betas) if betas_swapped else betas
        shrink = 1 - (lr * weight_decay if decay_lr else weight_decay)
        if decay == "l2":
            grad = grad + weight_decay * param
        elif decay == "decoupled":
            param = param * shrink
        m = beta1 * exp_avg + (1 - beta1) * grad
        v = beta2 * exp_avg_sq + (1 - beta2) * (grad * grad if square else grad.abs())
        t = step - (1 - step_from)
        bc1 = 1 - beta1**t if correct in ("both", "first", "second unrooted") else 1.0
        bc2 = 1 - beta2**t if correct in ("both", "second", "second unrooted") else 1.0
        if correct == "power":  # (1 − β)^t for 1 − β^t
            bc1, bc2 = (1 - beta1)**t, (1 - beta2)**t
        v_hat = v / bc2
        if correct == "second unrooted":  # √v / bc2 instead of √(v / bc2)
            v_hat = v / bc2**2
        if not root:
            denom = v_hat + eps
        elif eps_at == "inside":
            denom = (v_hat + eps).sqrt()
        elif eps_at == "before correction":  # the Adam paper's efficient form: ε added to √v, then corrected
            denom = (v.sqrt() + eps) / math.sqrt(bc2)
        else:
            denom = v_hat.sqrt() + eps
        param = param - lr * (m / bc1) / denom
        if decay == "after":
            param = param * shrink
        if returns == "corrected":
            return param, m / bc1, v_hat
        return (param, v, m) if returns == "swapped" else (param, m, v)

    return step_fn


MISTAKES = [
    Mistake("L2 instead of decoupled weight decay", _variant(decay="l2"),
            "your update adds weight_decay · θ to the gradient before the moments: that is Adam with L2 "
            "regularisation, where the decay is divided by √v̂ like the gradient. AdamW decouples it: "
            "θ ← θ · (1 − lr · weight_decay), and the moments see the raw gradient"),
    Mistake("bias correction forgotten", _variant(correct="none"),
            "your update uses m / (√v + ε) without bias correction: m and v start at 0, so divide by 1 − β1^t and "
            "1 − β2^t (m̂ = m / (1 − β1^t), v̂ = v / (1 − β2^t)), which matters most in the first steps"),
    Mistake("only m bias-corrected", _variant(correct="first"),
            "your update corrects m but not v: v̂ = v / (1 − β2^t) too, so the denominator is "
            "√v / √(1 − β2^t) + ε"),
    Mistake("eps inside the square root", _variant(eps_at="inside"),
            "your denominator is √(v̂ + ε): ε goes outside the root, √v̂ + ε, as in the paper and torch"),
    Mistake("decay applied after the update", _variant(decay="after"),
            "your weight decay shrinks θ after the Adam update: torch (and the paper) decay θ_{t-1}, before "
            "the update, θ ← θ · (1 − lr · λ) − lr · m̂ / (√v̂ + ε). (Hugging Face's old AdamW decayed after the "
            "update; it differs by lr · λ · lr · update)"),
    Mistake("step counted from 0", _variant(step_from=0),
            "your bias correction uses t − 1: step is this step's number counting from 1 (torch increments its "
            "counter before the update), so use 1 − β1^step and 1 − β2^step"),
    Mistake("bias correction (1 - beta)^t", _variant(correct="power"),
            "your bias correction divides by (1 − β1)^t and (1 − β2)^t: the correction is 1 − β1^t and 1 − β2^t, "
            "the power on β alone (1 - beta1 ** step), the total weight the average has given the gradients so far"),
    Mistake("step counted one too far", _variant(step_from=2),
            "your bias correction uses t + 1: step is already this step's number, counting from 1 (torch "
            "increments its counter before the update), so use 1 − β1^step and 1 − β2^step"),
    Mistake("bias-corrected moments returned", _variant(returns="corrected"),
            "the exp_avg and exp_avg_sq you return are the bias-corrected m̂ and v̂: the state keeps the raw moving "
            "averages m and v; m̂ and v̂ are recomputed from them at every step, for the update only"),
    Mistake("exp_avg and exp_avg_sq swapped", _variant(returns="swapped"),
            "you return (param, exp_avg_sq, exp_avg): the order is (param, exp_avg, exp_avg_sq), the first moment "
            "m before the second moment v"),
    Mistake("betas swapped", _variant(betas_swapped=True),
            "your moments swap the betas: betas = (β1, β2), β1 for the first moment m (of g), β2 for the second "
            "moment v (of g²)"),
    Mistake("no square root", _variant(root=False),
            "your denominator is v̂ + ε, without the square root: divide by √v̂ + ε, the root mean square of the "
            "gradient"),
    Mistake("v of |g|", _variant(square=False),
            "your second moment averages |g|, not g²: v ← β2·v + (1 − β2)·g² (grad * grad), so that √v̂ is the root "
            "mean square of the gradient"),
]

CONVENTIONS = (
    Convention("eps before the bias correction (the Adam paper's efficient form)", (
        "your update is lr · √(1 − β2^t) / (1 − β1^t) · m / (√v + ε): ε is added to √v before the bias correction, "
        "the Adam paper's \"more efficient\" form (Kingma & Ba, end of §2) and Hugging Face's AdamW. It equals "
        "m̂ / (√v̂ + ε / √(1 − β2^t)): the same update with a larger ε early on. torch.optim.AdamW, and this kata's "
        "reference, add ε after correcting: √v̂ + ε"), impl=_variant(eps_at="before correction")),
)


# ----------------------------------------------------------------------------- checks


@check("structure", "adamw_step takes (param, grad, exp_avg, exp_avg_sq, step, lr, betas, eps, weight_decay)")
def structure(kit):
    expect_structure(kit, TARGET, module=False,
                     params=["param", "grad", "exp_avg", "exp_avg_sq", "step", "lr", "betas", "eps", "weight_decay"])


def _loop_args(c, dtype="float64"):
    g = c.generator()
    shape = _shape(c)
    param = torch.randn(shape, generator=g, dtype=torch.float64).to(getattr(torch, dtype))
    target = torch.randn(shape, generator=g, dtype=torch.float64).to(getattr(torch, dtype))
    noise = [0.3 * torch.randn(shape, generator=g, dtype=torch.float64).to(getattr(torch, dtype))
             for _ in range(c.steps)]
    return param, target, noise, float(c.curvature), _hyper(c)


def torch_step(param, grad, exp_avg, exp_avg_sq, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
    """torch's own AdamW update (the single-tensor path of torch.optim.AdamW.step) on copies."""
    p, m, v = param.clone(), exp_avg.clone(), exp_avg_sq.clone()
    torch_adamw([p], [grad.clone()], [m], [v], [], [torch.tensor(float(step - 1))], foreach=False,
                capturable=False, differentiable=False, fused=None, grad_scale=None, found_inf=None,
                has_complex=False, amsgrad=False, beta1=betas[0], beta2=betas[1], lr=lr, weight_decay=weight_decay,
                eps=eps, maximize=False)
    return p, m, v


def _first_moment_off(got, want, last):
    """Which moment went wrong first, up to step last + 1: it points at the line to fix."""
    formulas = (t("exp_avg: m ← β1·m + (1 − β1)·g"), t("exp_avg_sq: v ← β2·v + (1 − β2)·g²"))
    for s, (g, w) in enumerate(zip(got.get("moments", [])[:last + 1], want["moments"])):
        for k, formula in enumerate(formulas):
            if not (isinstance(g, tuple) and len(g) == 2 and matches(g[k], w[k])):
                return t(". The moment returned by step {step} differs already: {formula}", step=s + 1, formula=formula)
    return ""


@check("numerics", "matches torch.optim.AdamW over 5 steps on a quadratic loss")
def loop(kit):
    c = _LOOP
    args = _loop_args(c)
    got = kit.drive(adamw_loop, *args)
    want = adamw_loop(torch_step, *args)
    adopted = None
    if kit.convention is None and not all(matches(u, e) for u, e in zip(got["params"], want["params"])):
        adopted = kit.settle()  # code that follows an accepted convention is compared with it from now on
    if kit.convention is not None:  # float32 internals follow the reference itself (impl None), to their tolerance
        want = adamw_loop(kit.convention.impl or torch_step, *args)
    for i, (u, e) in enumerate(zip(got["params"], want["params"])):
        try:
            compare(u, e, t("param after step {step}", step=i + 1), "(R, P)", tol=kit.tolerance("float64"))
        except Fail as fail:
            named = kit.name_mistake((), got, run=lambda m: adamw_loop(m.impl, *args),
                                     same=lambda g, w, i=i: matches(g["params"][i], w["params"][i]))
            raise Fail(t("{label}: {fail}{moment}", label=c.label, fail=fail,
                         moment=_first_moment_off(got, want, i)), named) from None
    if len(got["params"]) != len(want["params"]):
        raise Fail(t("{label}: the loop returned {got} parameters for {want} steps", label=c.label,
                     got=len(got["params"]), want=len(want["params"])))
    if adopted is not None:
        raise Accepted(t(adopted.explain))


@check("properties", "weight decay is decoupled: with a zero gradient and zero moments, θ only shrinks by "
                     "1 − lr · weight_decay")
def decoupled(kit):
    c = CASES[3]
    param = inputs(c, "float64")[0]
    zero = param * 0
    h = _hyper(c)
    got = kit.user((param, zero, zero, zero, 1, h["lr"], h["betas"], h["eps"], h["weight_decay"]))
    got_param = got[0] if isinstance(got, (tuple, list)) and got else got
    want = param * (1 - h["lr"] * h["weight_decay"])
    try:
        compare(got_param, want, "param", "(...)")
    except Fail as fail:
        named = kit.name_mistake((param, zero, zero, zero, 1, h["lr"], h["betas"], h["eps"], h["weight_decay"]),
                                 got_param, run=lambda m: m.impl(param, zero, zero, zero, 1, h["lr"], h["betas"],
                                                                 h["eps"], h["weight_decay"])[0])
        raise Fail(t("{label}, grad = 0, exp_avg = exp_avg_sq = 0, step 1: {fail}. With nothing to follow, AdamW "
                     "only decays: θ · (1 − lr · weight_decay) = θ · {factor:g}", label=c.label, fail=fail,
                     factor=1 - h["lr"] * h["weight_decay"]), named) from None
