"""Hidden checks: LoRALinear, a low-rank adapter on a frozen nn.Linear (Hu et al. 2021, as PEFT writes it).

The standard checks compare the forward pass with weights loaded by name (base.weight, base.bias,
lora_A, lora_B: B is loaded non-zero, so the scale and the order of A and B show). The checks below
hold the rest of the contract: a fresh wrapper equals its base layer, A is PEFT's kaiming-uniform,
only A and B train, dropout sits on the LoRA path's input, and merge()/unmerge() change nothing
the layer computes. Those that build or train a module run in the child (checker/checks/torch_lora/driver.py).
"""

import math
from types import SimpleNamespace

import torch
from torch import nn

from checker.checks.torch_lora.driver import lora_fresh, lora_merge, lora_trainable
from checker.kit import Fail, FollowUp, Mistake, UserError, at_line, case, check, compare, expect_structure, matches
from checker.lang import t

TARGET = "LoRALinear"
OUTPUTS = [("output", "(..., D_out)")]
BATCH_INDEPENDENT = True
DROPOUT = True  # the standard train-vs-eval checks, with dropout=0.5 on the LoRA path

# Every dimension its own size, and alpha / r never 1 nor its own inverse, so r / alpha, a missing
# scale and alpha alone all move the result. Case 2 has a base without bias and inputs of rank 2.
# Case 3 is square (D_in = D_out) on purpose, and only there: a merge that adds (B A)ᵀ raises a
# shape error on every other case, and on this one it runs, so the mistake can be named.
CASES = [
    case(1, B=2, T=5, D_in=7, D_out=6, r=3, alpha=12.0, bias=True),
    case(2, N=9, D_in=8, D_out=11, r=2, alpha=5.0, bias=False),
    case(3, B=3, T=4, D_in=10, D_out=10, r=4, alpha=6.0, bias=True),
]
TIMING = case(4, B=8, T=64, D_in=256, D_out=384, r=8, alpha=16.0, bias=True)
_SQUARE = CASES[2]
# The fresh-init statistics: r · D_in = 2048 draws of A. Under U(-b, b) the largest |A| falls below
# 0.99 b with probability 0.99^2048 < 1e-8, and the sample std stays within 5% of b / √3 (its
# relative spread is about 1.6%, so 5% is three standard errors). kaiming_uniform_ with a = √6
# instead of √5 has its bound at 0.926 b, and randn-like inits have no bound at all.
_INIT = case(5, D_in=64, D_out=48, r=32, alpha=16.0, bias=True)
_BOUND_REACHED, _STD_TOL = 0.99, 0.05
_SEED = 20210617  # the global seed the fresh module is built under (the LoRA paper's arXiv date)
# Dropout on the output of B zeroes about p of the LoRA update exactly; on its input (a whole row of
# x dropped with probability p^D_in < 1%) almost none.
_ZEROED_SHARE = 0.2


def _base(c, dtype=torch.float64):
    g = c.generator(salt=3)
    base = nn.Linear(c.D_in, c.D_out, bias=c.bias, dtype=dtype)
    with torch.no_grad():  # seeded, so every call gives the same base
        base.weight.copy_(torch.randn(c.D_out, c.D_in, generator=g, dtype=torch.float64) / math.sqrt(c.D_in))
        if c.bias:
            base.bias.copy_(torch.randn(c.D_out, generator=g, dtype=torch.float64) * 0.5)
    return base


def init(c):
    return {"base": _base(c), "r": c.r, "alpha": c.alpha}


def inputs(c, dtype):
    shape = [c.dims[k] for k in ("B", "T", "N") if k in c.dims] + [c.D_in]
    return (torch.randn(shape, generator=c.generator(), dtype=torch.float64).to(getattr(torch, dtype)),)


# ----------------------------------------------------------------------------- named mistakes


def _variant(scale="alpha/r", dropout_at="input", b_init="zeros", freeze=True, merge_scale=True,
             merge_transposed=False, skip_when_merged=True):
    """LoRALinear with knobs; every knob at its default gives the right answer."""

    class Wrong(nn.Module):
        def __init__(self, base, r, alpha, dropout=0.0):
            super().__init__()
            self.base = base.requires_grad_(not freeze)
            self.scaling = {"alpha/r": alpha / r, "r/alpha": r / alpha, "none": 1.0, "alpha": alpha,
                            "alpha/sqrt(r)": alpha / math.sqrt(r), "(alpha/r)^2": (alpha / r) ** 2, "1/r": 1 / r}[scale]
            self.lora_A = nn.Parameter(torch.empty(r, base.in_features))
            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
            self.lora_B = nn.Parameter(torch.zeros(base.out_features, r) if b_init == "zeros"
                                       else torch.randn(base.out_features, r))
            self.dropout = nn.Dropout(dropout)
            self.merged = False

        def delta(self):
            d = self.lora_B @ self.lora_A * (self.scaling if merge_scale else 1.0)
            return d.T if merge_transposed else d

        def forward(self, x):
            base_in = self.dropout(x) if dropout_at == "base" else x
            lora_in = self.dropout(x) if dropout_at == "input" else x
            y = self.base(base_in)
            if self.merged and skip_when_merged:
                return y
            update = lora_in @ self.lora_A.T @ self.lora_B.T * self.scaling
            return y + (self.dropout(update) if dropout_at == "output" else update)

        @torch.no_grad()
        def merge(self):
            if not self.merged:
                self.base.weight += self.delta()
                self.merged = True

        @torch.no_grad()
        def unmerge(self):
            if self.merged:
                self.base.weight -= self.delta()
                self.merged = False

    return Wrong


MISTAKES = [
    Mistake("scaling r / alpha", _variant(scale="r/alpha"),
            "your output equals base(x) + (r / alpha) · x Aᵀ Bᵀ: the scale is inverted. LoRA scales the update by "
            "alpha / r (self.scaling = alpha / r), so that changing r does not change how large the update is"),
    Mistake("scaling alpha", _variant(scale="alpha"),
            "your output equals base(x) + alpha · x Aᵀ Bᵀ: the scale is alpha alone. LoRA divides by the rank, "
            "self.scaling = alpha / r"),
    Mistake("scaling missing", _variant(scale="none"),
            "your output equals base(x) + x Aᵀ Bᵀ with no scale: multiply the low-rank path by self.scaling = "
            "alpha / r"),
    Mistake("scaling alpha / sqrt(r)", _variant(scale="alpha/sqrt(r)"),
            "your output equals base(x) + (alpha / √r) · x Aᵀ Bᵀ: that is rsLoRA's scale (PEFT's use_rslora=True), "
            "which keeps the update's size as r grows; this kata follows the LoRA paper and PEFT's default, "
            "self.scaling = alpha / r"),
    Mistake("scaling applied twice", _variant(scale="(alpha/r)^2"),
            "your output equals base(x) + (alpha / r)² · x Aᵀ Bᵀ: the scale is applied twice (once inside the "
            "low-rank path, once more on the update); multiply by self.scaling = alpha / r once"),
    Mistake("scaling 1 / r", _variant(scale="1/r"),
            "your output equals base(x) + (1 / r) · x Aᵀ Bᵀ: the scale lacks alpha; LoRA scales the update by "
            "self.scaling = alpha / r"),
]
_B_RANDOM = Mistake("B random", _variant(b_init="randn"),
                    "B starts at random values, so a fresh wrapper already changes the pretrained layer: initialise "
                    "B to zeros (nn.init.zeros_) and A at random, so B A = 0 and fine-tuning starts exactly from the "
                    "base model")
_NOT_FROZEN = Mistake("base not frozen", _variant(freeze=False),
                      "the base layer's weight or bias still requires grad, so the optimizer would update all D_out · D_in "
                      "weights and LoRA saves nothing: call self.base.requires_grad_(False) (or set "
                      "weight.requires_grad = False and the bias's) in __init__")
_MERGE_MISTAKES = (
    Mistake("merge without the scale", _variant(merge_scale=False),
            "merge() adds B A to base.weight without the scale: the merged layer must compute what the unmerged "
            "one does, so add (alpha / r) · B @ A, the same self.scaling as in forward"),
    Mistake("merge adds (B A) transposed", _variant(merge_transposed=True),
            "merge() adds (B A)ᵀ (A.T @ B.T) to base.weight: nn.Linear stores its weight as (D_out, D_in), and "
            "the update in that layout is B @ A, (D_out, r) x (r, D_in)"),
    Mistake("forward still adds the LoRA path after merge", _variant(skip_when_merged=False),
            "after merge() your forward still adds the LoRA path, so the update counts twice: once merged, forward "
            "must return base(x) alone (keep a self.merged flag)"),
)
_DROPOUT_ON_BASE = ("dropout acts on the base path: with B = 0 the layer must equal base(x) in training mode too. "
                    "Apply dropout to the LoRA path's input only: base(x) + lora_B(lora_A(dropout(x))) · scaling")
_BASE_PATH_WRONG = ("lora_B is zero, so the LoRA path adds nothing, yet the output is not base(x): the base path "
                    "itself differs. Call self.base(x) as it is (its bias included), not a product of your own")
_DROPOUT_INSIDE = ("dropout acts inside the LoRA path (on x Aᵀ, between A and B, or on the update), not on its input. "
                   "With one non-zero feature per row of x, dropout(x) keeps or zeroes each row whole, so each row's "
                   "update is either 0 or 1 / (1 - p) times the plain one: lora_B(lora_A(dropout(x))) · scaling")
_DROPOUT_ON_OUTPUT = ("dropout acts on the output of the LoRA path: apply it to its input, lora_A(dropout(x)), as "
                      "PEFT and loralib do, not to the update B A x")


# The scale of the low-rank path as an expression of alpha and r, with the named mistake of each wrong one: the first
# expression that gives the scale measured on every case names it. A constant that none gives is still reported
# as a wrong scale, with its value: never as another mistake.
_NAMED = {m.name: m for m in MISTAKES}
_SCALES = (
    (lambda a, r: a / r, None),  # right
    (lambda a, r: r / a, _NAMED["scaling r / alpha"]),
    (lambda a, r: a, _NAMED["scaling alpha"]),
    (lambda a, r: 1.0, _NAMED["scaling missing"]),
    (lambda a, r: a / math.sqrt(r), _NAMED["scaling alpha / sqrt(r)"]),
    (lambda a, r: (a / r) ** 2, _NAMED["scaling applied twice"]),
    (lambda a, r: 1 / r, _NAMED["scaling 1 / r"]),
)


def _update_scale(kit, c) -> float | None:
    """The constant s with which the user's B-dependent output equals s · x Aᵀ Bᵀ on case c (measured by loading
    B and 2B: the difference holds the update alone, whatever the base path does), or None where no constant fits."""
    (x,) = inputs(c, "float64")
    state = kit.state(c, "float64")
    twice = dict(state, lora_B=2 * state["lora_B"])
    try:
        once, doubled = kit.user((x,), case=c, state=state), kit.user((x,), case=c, state=twice)
    except UserError as err:
        if err.not_implemented:
            raise
        return None  # the other checks show the error
    v = x @ state["lora_A"].T @ state["lora_B"].T  # (..., D_out): the update without its scale
    if not all(isinstance(o, torch.Tensor) and o.shape == v.shape and o.dtype == v.dtype for o in (once, doubled)):
        return None
    delta = doubled - once
    s = float((delta * v).sum() / (v * v).sum())
    return s if matches(delta, s * v) else None


def _namespace(impl):
    return SimpleNamespace(LoRALinear=impl)


# ----------------------------------------------------------------------------- checks


@check("structure", "LoRALinear is an nn.Module holding base, lora_A (r, D_in) and lora_B (D_out, r)")
def structure(kit):
    expect_structure(kit, TARGET, module=True, params=["base", "r", "alpha", "dropout"], forward=["x"],
                     init=init(CASES[0]))


_NO_INIT_DRAWS = 1e3  # |A| beyond this is no initialisation of an (r, D_in) matrix (kaiming: 1/√D_in, Gaussian: ~4σ)
_A_NOT_DRAWN = ("a fresh lora_A is not drawn from torch's random generator: the same seed should give the same A "
                "and another seed another A")
_A_UNINITIALISED = ("lora_A is left uninitialised (torch.empty, or nn.Parameter(torch.Tensor(r, D_in)) without an "
                    "init): it holds whatever memory held before. A starts at random: "
                    "nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))")


@check("structure", "a fresh wrapper equals its base layer: B starts at zero, A at random")
def fresh_equals_base(kit):
    c = CASES[0]
    (x,) = inputs(c, "float64")
    got = kit.drive(lora_fresh, _base(c), c.r, c.alpha, x, _SEED)
    A, B = got["A"], got["B"]
    if not isinstance(B, torch.Tensor) or not isinstance(A, torch.Tensor):
        raise Fail(t("a fresh LoRALinear has no parameters lora_A and lora_B"))
    # Before the output: uninitialised memory may hold NaN (then B A = NaN), or bits read as floats no init
    # would draw (|A| ~ 1e35). Leftover floats that look drawn are caught by the seeds below.
    if not bool(torch.isfinite(A).all()) or (A.numel() and float(A.abs().max()) > _NO_INIT_DRAWS):
        raise Fail(t(_A_NOT_DRAWN), t(_A_UNINITIALISED))
    if not matches(got["out"], got["base_out"]):
        b_zero = bool((B == 0).all())
        raise Fail(t("a fresh LoRALinear(base, r={r}, alpha={alpha}) does not compute base(x)", r=c.r, alpha=c.alpha),
                   t(_BASE_PATH_WRONG) if b_zero else t(_B_RANDOM.explain))
    if bool((A == 0).all()):
        raise Fail(t("a fresh lora_A is all zeros"),
                   t("with A = 0 and B = 0 both gradients are zero (dB = g (x Aᵀ)ᵀ = 0, dA = Bᵀ g x = 0) and the "
                     "adapter never learns. A starts at random (nn.init.kaiming_uniform_(self.lora_A, "
                     "a=math.sqrt(5))), only B at zero") if bool((B == 0).all()) else
                   t("yours starts A at zero and B at random, the two initialisations swapped: PEFT draws A "
                     "(nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))) and zeroes B, so that B A = 0 at the "
                     "start and dB = g (x Aᵀ)ᵀ is not zero"))
    again = kit.drive(lora_fresh, _base(c), c.r, c.alpha, x, _SEED)["A"]
    other = kit.drive(lora_fresh, _base(c), c.r, c.alpha, x, _SEED + 1)["A"]
    if not torch.equal(A, again) or torch.equal(A, other):
        raise Fail(t(_A_NOT_DRAWN), t(_A_UNINITIALISED))


@check("structure", "lora_A starts as PEFT's kaiming_uniform_(a=√5): U(-1/√D_in, 1/√D_in)", followup=True)
def a_distribution(kit):
    c = _INIT
    got = kit.drive(lora_fresh, _base(c), c.r, c.alpha, inputs(CASES[0], "float64")[0].new_zeros(1, c.D_in), _SEED)
    A = got["A"]
    if not isinstance(A, torch.Tensor) or tuple(A.shape) != (c.r, c.D_in):
        return  # the structure check reports a missing or misshapen lora_A; no follow-up on top of it
    bound = 1 / math.sqrt(c.D_in)
    largest, std = float(A.abs().max()), float(A.double().std())
    if largest > bound * (1 + 1e-6) or largest < _BOUND_REACHED * bound or abs(std - bound / math.sqrt(3)) > \
            _STD_TOL * bound / math.sqrt(3):
        raise FollowUp(t("a fresh lora_A with D_in={d_in}, r={r} has largest |A| {largest:.4f} and std {std:.4f}; "
                         "PEFT's kaiming_uniform_(a=√5) gives U(-1/√D_in, 1/√D_in): largest ≈ {bound:.4f}, std ≈ "
                         "{want:.4f}. Follow-up: the paper draws A from a Gaussian, PEFT (and loralib) from "
                         "nn.Linear's default; why must A be random at all, and does its scale matter once B = 0?",
                         d_in=c.D_in, r=c.r, largest=largest, std=std, bound=bound, want=bound / math.sqrt(3)))


@check("gradients", "only lora_A and lora_B train: base.weight and base.bias are frozen")
def frozen_base(kit):
    for c in CASES[:2]:
        (x,) = inputs(c, "float64")
        got = kit.drive(lora_trainable, init(c), kit.state(c, "float64"), x)
        trainable = sorted(n for n, flag in got["requires_grad"].items() if flag)
        if trainable != ["lora_A", "lora_B"]:
            raise Fail(t("{label}: the parameters that require grad are {names}; only lora_A and lora_B should",
                         label=c.label, names=", ".join(trainable) or t("none")),
                       t(_NOT_FROZEN.explain) if any(n.startswith("base.") for n in trainable) else None)
        missing = [n for n in ("lora_A", "lora_B") if not got["has_grad"].get(n)]
        if missing:
            raise Fail(t("{label}: after backward, {names} received no gradient: the LoRA path must stay in the graph "
                         "(no torch.no_grad or .detach() around it)", label=c.label, names=", ".join(missing)))


@check("numerics", "the low-rank update is scaled by alpha / r")
def update_scale(kit):
    measured = []
    for c in CASES:
        (x,) = inputs(c, "float64")
        if matches(kit.user((x,), case=c), kit.reference((x,), case=c)):
            continue
        s = _update_scale(kit, c)
        if s is None:
            return  # the update is not a constant times x Aᵀ Bᵀ: the numerics checks say where it differs
        measured.append((c, s))
    if not measured:
        return
    c, s = measured[0]
    fits = [m for f, m in _SCALES if all(math.isclose(v, f(k.alpha, k.r), rel_tol=1e-6) for k, v in measured)]
    if fits and fits[0] is None:
        return  # the scale is right: what differs is elsewhere
    message = t("{label}: your output changes by s · x Aᵀ Bᵀ with s = {s:.6g} as lora_B changes, a constant scale on "
                "the low-rank path; the contract's is alpha / r = {alpha:g} / {r} = {want:.6g}", label=c.label, s=s,
                alpha=c.alpha, r=c.r, want=c.alpha / c.r)
    raise Fail(message, t(fits[0].explain) if fits else t(
        "the low-rank update is scaled by another constant than alpha / r (here {s:.6g} where alpha / r = "
        "{want:.6g}): multiply x Aᵀ Bᵀ by self.scaling = alpha / r, once", s=s, want=c.alpha / c.r))


@check("properties", "dropout acts on the LoRA path only: with B = 0, training mode still gives base(x)")
def dropout_not_on_base(kit):
    c = CASES[0]
    (x,) = inputs(c, "float64")
    state = kit.state(c, "float64")
    state["lora_B"] = torch.zeros_like(state["lora_B"])
    want = kit.reference((x,), case=c, state=state)
    got = kit.user((x,), case=c, state=state, init={**init(c), "dropout": 0.5}, train=True)
    try:
        compare(got, want, t("output"), "(..., D_out)")
    except Fail as fail:
        raise Fail(t("{label}, B = 0, dropout=0.5, training mode: {fail}", label=c.label, fail=fail),
                   t(_DROPOUT_ON_BASE)) from None


@check("properties", "dropout acts on the input of A, not on the LoRA update")
def dropout_on_input(kit):
    # Compared with the user's own module in eval mode (B loaded, and B = 0 for the base path alone), so that a
    # mistake outside dropout (a scale, a base path) is not read as a dropout mistake.
    c = CASES[0]
    (x,) = inputs(c, "float64")
    state = kit.state(c, "float64")
    zero_b = dict(state, lora_B=torch.zeros_like(state["lora_B"]))
    base_only = kit.user((x,), case=c, state=zero_b)
    got = kit.user((x,), case=c, init={**init(c), "dropout": 0.5}, train=True)
    if _tensors_like(base_only, got):
        zeroed = float(((got - base_only).abs() < 1e-12).double().mean())
        if zeroed > _ZEROED_SHARE:
            raise Fail(t("{label}, dropout=0.5, training mode: the LoRA update is exactly 0 in {share:.0%} of the "
                         "output elements", label=c.label, share=zeroed), t(_DROPOUT_ON_OUTPUT))
    # One non-zero feature per row: dropout(x) keeps a row whole (scaled by 2) or zeroes it, so every row
    # of the update is 0 or twice the one without dropout. Dropout on x Aᵀ (r values per row) is neither.
    one_hot = torch.zeros_like(x)
    flat = one_hot.view(-1, c.D_in)
    rows = torch.arange(flat.shape[0])
    flat[rows, rows % c.D_in] = 1.0 + rows.double() / flat.shape[0]
    base_out, full = kit.user((one_hot,), case=c, state=zero_b), kit.user((one_hot,), case=c, state=state)
    got = kit.user((one_hot,), case=c, state=state, init={**init(c), "dropout": 0.5}, train=True)
    if _tensors_like(base_out, full, got):
        update, plain = (got - base_out).reshape(-1, c.D_out), (full - base_out).reshape(-1, c.D_out)
        for i in range(update.shape[0]):
            if not (matches(update[i], torch.zeros_like(update[i])) or matches(update[i], 2 * plain[i])):
                raise Fail(t("{label}, dropout=0.5, training mode, x with one non-zero feature per row: row {row} of "
                             "the LoRA update is neither 0 nor 2 times your update without dropout",
                             label=c.label, row=i), t(_DROPOUT_INSIDE))


def _tensors_like(first, *others) -> bool:
    return isinstance(first, torch.Tensor) and all(isinstance(o, torch.Tensor) and o.shape == first.shape
                                                   for o in others)


def _merge_run(kit, c, impl=None):
    (x,) = inputs(c, "float64")
    args = (init(c), kit.state(c, "float64"), x)
    return kit.drive(lora_merge, *args) if impl is None else lora_merge(_namespace(impl), *args)


@check("properties", "merge() adds (alpha / r)·B A to base.weight once; merged equals unmerged; unmerge() restores it")
def merge_unmerge(kit):
    for c in [_SQUARE] + [c for c in CASES if c is not _SQUARE]:  # square first: a transposed merge runs there
        try:
            got = _merge_run(kit, c)
        except UserError as err:
            if err.not_implemented:
                raise
            raise Fail(t("{label}: merge()/unmerge() raised {error}{where}. base.weight is (D_out, D_in) = {shape}, "
                         "and so is B @ A", label=c.label, error=err, where=at_line(err), shape=(c.D_out, c.D_in)),
                       line=None) from None
        if got["trainable"] != ["lora_A", "lora_B"]:
            frozen = [name for name in ("lora_A", "lora_B") if name not in got["trainable"]]
            raise Fail(t("{label}: after merge() and unmerge(), the parameters that require grad are {names}; only "
                         "lora_A and lora_B should", label=c.label, names=", ".join(got["trainable"]) or t("none")),
                       t("lora_A and lora_B must keep requires_grad=True: freeze the base layer alone "
                         "(self.base.requires_grad_(False)), not every parameter of the module") if frozen else
                       t("change base.weight in place under torch.no_grad() (self.base.weight += ...), not by "
                         "assigning a new nn.Parameter, which requires grad"))
        want = _merge_run(kit, c, impl=kit.solution.LoRALinear)
        W = kit.state(c, "float64")["base.weight"]
        steps = (("merged", t("output after merge()")), ("W_merged", t("base.weight after merge()")),
                 ("unmerged", t("output after unmerge()")), ("W_after", t("base.weight after unmerge()")))
        for key, what in steps:
            expected = want[key]
            try:
                compare(got[key], expected, what)
            except Fail as fail:
                found = kit.name_mistake((), got, mistakes=_MERGE_MISTAKES, run=lambda m, c=c: _merge_run(kit, c, m.impl),
                                         same=lambda g, w: all(matches(g[k], w[k]) for k, _ in steps))
                extra = t(" (the output before merge() was right)") if matches(got["before"], want["before"]) else ""
                if key in ("merged", "W_merged") and matches(got["once"], want["once"]):
                    extra = t(" (after one merge() the output was right)")
                    found = found or t("the second merge() added the update again: keep a self.merged flag and "
                                       "return when already merged")
                note = t(": base.weight did not change") if key == "W_merged" and matches(got[key], W) else ""
                raise Fail(t("{label}: {fail}{note}{extra}", label=c.label, fail=fail, note=note, extra=extra),
                           found) from None
