"""Hidden checks: the Noam learning-rate schedule ("Attention Is All You Need" §5.3).

noam_lr is evaluated in the child over whole ranges of steps (one driver call per setting);
noam_scheduler is driven there too, on a torch.optim.Optimizer that records the lr in effect
during every optimizer.step() (checker/checks/torch_noam_schedule/driver.py). No tensors: the results are
floats, so the checks compare them here with their own tolerance instead of the standard checks.
"""

import math

from checker.checks.torch_noam_schedule.driver import noam_schedule_run, noam_values
from checker.kit import Accepted, Fail, Mistake, UserError, case, check, expect_structure
from checker.lang import t

TARGET = "noam_lr"
# Settings: the paper's (512, 4000), then small warm-ups so ~3·warmup steps stay cheap; every
# number its own value, factor != 1 twice (a factor that is ignored cannot pass).
CASES = [
    case(1, d_model=512, warmup_steps=4000, factor=1.0),
    case(2, d_model=64, warmup_steps=40, factor=2.0),
    case(3, d_model=96, warmup_steps=7, factor=0.5),
]
TIMING = CASES[0]
# Two floats computed by the same formula in another order differ by a few ulps (~1e-16 relative).
_RTOL = 1e-12
# Where noam_lr is compared: the start, both sides of the peak, the peak, and far into the decay.
_SAMPLE_STEPS = (1, 2, 3, 5, 6, 7, 8, 9, 39, 40, 41, 100, 3999, 4000, 4001, 12345, 100000)


def inputs(c, dtype="float64"):
    return 1000, c.d_model, c.warmup_steps, c.factor  # used for timing only


def reference(step, c):
    return c.factor * c.d_model ** -0.5 * min(step ** -0.5, step * c.warmup_steps ** -1.5)


# ----------------------------------------------------------------------------- named mistakes


def _noam(step, d_model, warmup, factor, *, pick=min, warmup_power=-1.5, model_power=-0.5, use_factor=True,
          warmup_branch=True):
    rise = step * warmup ** warmup_power
    decay = step ** -0.5
    return (factor if use_factor else 1.0) * d_model ** model_power * (pick(decay, rise) if warmup_branch else decay)


def _variant(**knobs):
    return lambda step, d_model, warmup_steps, factor=1.0: _noam(step, d_model, warmup_steps, factor, **knobs)


MISTAKES = [
    Mistake("max instead of min", _variant(pick=max),
            "your rate equals max(step^-0.5, step · warmup^-1.5): the schedule takes the MIN of the two branches "
            "(the smaller one: the linear rise before the peak, 1/√step after)"),
    Mistake("warmup^-0.5", _variant(warmup_power=-0.5),
            "your rate uses step · warmup_steps^-0.5 for the rise: it is step · warmup_steps^-1.5, so that both "
            "branches meet at step == warmup_steps"),
    Mistake("d_model^-0.5 missing", _variant(model_power=0.0),
            "your rate misses the d_model^-0.5 factor: multiply by d_model ** -0.5"),
    Mistake("d_model^+0.5", _variant(model_power=0.5),
            "your rate multiplies by √d_model: the factor is d_model^-0.5 (1 / math.sqrt(d_model))"),
    Mistake("warm-up to d_model^-0.5", lambda step, d_model, warmup_steps, factor=1.0:
            factor * d_model ** -0.5 * (step / warmup_steps if step < warmup_steps else step ** -0.5),
            "your warm-up rises in a straight line to d_model^-0.5 (step / warmup_steps): the paper's rise is "
            "step · warmup_steps^-1.5, which meets the decay 1/√step at step == warmup_steps, so the peak is "
            "d_model^-0.5 · warmup_steps^-0.5"),
    Mistake("factor ignored", _variant(use_factor=False),
            "your rate ignores factor: multiply the whole rate by factor"),
    Mistake("no warm-up", _variant(warmup_branch=False),
            "your rate is d_model^-0.5 · step^-0.5 at every step, without the warm-up: take "
            "min(step^-0.5, step · warmup_steps^-1.5)"),
]

# What a wrong scheduler's lrs equal, in terms of the right rates r(k) = noam_lr(k), k = 1, 2, ...
# The Annotated Transformer's rate() maps LambdaLR's step 0 to 1, so its lrs are r(max(k - 1, 1)): the
# paper's schedule one optimizer step late. It is the tutorial's own code, so an accepted variant.
_ANNOTATED = ("your scheduler gives noam_lr(1) to the first TWO optimizer steps and noam_lr(k - 1) to step k after, "
              "as the Annotated Transformer's rate() does (if step == 0: step = 1, for LambdaLR's call with 0 at "
              "construction): the paper's schedule one step late, its peak at warmup_steps + 1. This kata's "
              "reference gives the k-th optimizer.step() noam_lr(k): LambdaLR(optimizer, lambda s: noam_lr(s + 1, ...))")
_SCHEDULER_MISTAKES = [
    Mistake("lambda 1.0 at step 0", lambda r, k: 1.0 if k == 1 else r(k - 1),
            "your scheduler runs the first step at the optimizer's full lr (your lambda returns 1 for step 0) and is one "
            "step late after: LambdaLR calls the lambda with 0 at construction; use lambda s: noam_lr(s + 1, ...)"),
    Mistake("one step late", lambda r, k: r(k - 1) if k > 1 else None,
            "your scheduler is one step late: during step k the lr is noam_lr(k - 1). LambdaLR calls the lambda with 0 at "
            "construction (the lr of step 1): use lambda s: noam_lr(s + 1, ...)"),
    Mistake("one step early", lambda r, k: r(k + 1),
            "your scheduler is one step early: during step k the lr is noam_lr(k + 1) (a scheduler.step() too many, or "
            "s + 2): LambdaLR calls the lambda with 0 at construction, so use lambda s: noam_lr(s + 1, ...)"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "noam_lr(step, d_model, warmup_steps, factor) and noam_scheduler(optimizer, ...) are functions")
def structure(kit):
    expect_structure(kit, "noam_lr", module=False, params=["step", "d_model", "warmup_steps", "factor"])
    expect_structure(kit, "noam_scheduler", module=False, params=["optimizer", "d_model", "warmup_steps", "factor"])


@check("numerics", "noam_lr matches the paper's formula at the start, around the peak and far after it")
def values(kit):
    for c in CASES:
        got = _values(kit, c, _SAMPLE_STEPS)
        for step, value in zip(_SAMPLE_STEPS, got):
            want = reference(step, c)
            if not _close(value, want):
                found = _diagnose(kit, c, got, step, value)
                raise Fail(t("{label}: noam_lr({step}, {d_model}, {warmup_steps}, {factor}) = {value}, expected {want}",
                             label=c.label, step=step, d_model=c.d_model, warmup_steps=c.warmup_steps, factor=c.factor,
                             value=repr(value), want=repr(want)), found)


@check("numerics", "noam_lr's factor defaults to 1.0")
def default_factor(kit):
    c = CASES[1]
    value = _float(kit.user((10, c.d_model, c.warmup_steps)), f"noam_lr(10, {c.d_model}, {c.warmup_steps})")
    explicit = _float(kit.user((10, c.d_model, c.warmup_steps, 1.0)),
                      f"noam_lr(10, {c.d_model}, {c.warmup_steps}, 1.0)")
    if not _close(value, explicit):
        raise Fail(t("noam_lr(10, {d_model}, {warmup_steps}) = {value}, but with factor=1.0 given it is {explicit}: "
                     "factor defaults to 1.0", d_model=c.d_model, warmup_steps=c.warmup_steps, value=repr(value),
                     explicit=repr(explicit)))


@check("properties", "the rate peaks at step == warmup_steps")
def peak(kit):
    for c in CASES[1:]:
        steps = list(range(1, 3 * c.warmup_steps + 1))
        got = _values(kit, c, steps)
        best = max(range(len(steps)), key=lambda i: got[i]) + 1
        if best != c.warmup_steps:
            raise Fail(t("{label}: over steps 1..{last} your rate is largest at step {best}, not at warmup_steps = "
                         "{warmup_steps}: the two branches of the min must meet there (step · warmup_steps^-1.5 = "
                         "step^-0.5 exactly when step = warmup_steps)", label=c.label, last=steps[-1], best=best,
                         warmup_steps=c.warmup_steps))


@check("properties", "linear rise up to the peak: noam_lr(k) = k · noam_lr(1) for k <= warmup_steps")
def linear_rise(kit):
    for c in CASES[1:]:
        steps = list(range(1, c.warmup_steps + 1))
        got = _values(kit, c, steps)
        for k, value in zip(steps, got):
            if not _close(value, k * got[0]):
                raise Fail(t("{label}: noam_lr({k}) = {value} is not {k} · noam_lr(1) = {want}: before the peak the "
                             "rate must grow linearly with the step (step · warmup_steps^-1.5)", label=c.label, k=k,
                             value=repr(value), want=repr(k * got[0])))


@check("properties", "inverse square root after the peak: noam_lr(k) · √k is constant for k >= warmup_steps")
def inverse_sqrt(kit):
    for c in CASES[1:]:
        steps = list(range(c.warmup_steps, 3 * c.warmup_steps + 1))
        got = _values(kit, c, steps)
        first = got[0] * math.sqrt(steps[0])
        for k, value in zip(steps, got):
            if not _close(value * math.sqrt(k), first):
                raise Fail(t("{label}: noam_lr({k}) · √{k} = {value}, but at the peak it is {first}: after "
                             "warmup_steps the rate must decay as 1/√step (step^-0.5)", label=c.label, k=k,
                             value=repr(value * math.sqrt(k)), first=repr(first)))


def _step_zero_why():
    return t("Follow-up: what is the rate at step 0? The formula has none (0^-0.5 divides by zero), and LambdaLR calls "
             "its lambda with 0 when it is built, so this is where off-by-one schedules come from. This kata's "
             "reference counts steps from 1 and raises ValueError for step < 1, so that a caller who counts from 0 "
             "learns it at once instead of training one step late (the Annotated Transformer maps 0 to 1 instead)")


@check("properties", "noam_lr raises ValueError for step < 1 (steps count from 1)", followup=True)
def step_zero(kit):
    # The paper's formula is right on every step >= 1 and undefined at 0: what to do there is beyond the
    # textbook answer, so a follow-up question (ZeroDivisionError, a clamp to 1), not a failure.
    c = CASES[1]
    asserted = False
    for step in (0, -3):
        try:
            value = kit.user((step, c.d_model, c.warmup_steps, c.factor))
        except UserError as err:
            if err.not_implemented:
                raise
            if err.kind == "AssertionError":
                asserted = True
            elif err.kind != "ValueError":
                raise Fail(t("noam_lr({step}, ...) raised {kind} ({message}), not ValueError. {why}", step=step,
                             kind=err.kind, message=err.message, why=_step_zero_why())) from None
            continue
        raise Fail(t("noam_lr({step}, ...) returned {value}. {why}", step=step, value=repr(value), why=_step_zero_why()))
    if asserted:
        raise Accepted(t("an `assert` was recognised (AssertionError) where this kata's reference raises ValueError: it "
                         "stops the same wrong call, but asserts vanish under `python -O`, and then a step counted from "
                         "0 would train one step late, silently"))


@check("properties", "noam_scheduler: the lr during the k-th optimizer.step() is noam_lr(k), over 3·warmup steps")
def scheduler(kit):
    annotated = False
    for c in CASES[1:]:
        steps = 3 * c.warmup_steps + 2
        try:
            run = kit.drive(noam_schedule_run, c.d_model, c.warmup_steps, c.factor,
                            steps)
        except UserError as err:
            if err.kind == "ValueError" and not err.not_implemented:
                raise Fail(t("{label}: noam_scheduler raised ValueError ({message}) while it was built", label=c.label,
                             message=err.message),
                           t("LambdaLR calls the lambda with 0 at construction, and noam_lr(0) is not defined: use "
                             "lambda s: noam_lr(s + 1, ...)")) from None
            if err.kind == "ZeroDivisionError":
                raise Fail(t("{label}: noam_scheduler raised ZeroDivisionError ({message})", label=c.label,
                             message=err.message),
                           t("LambdaLR calls the lambda with 0 at construction, and 0 ** -0.5 divides by zero: use "
                             "lambda s: noam_lr(s + 1, ...)")) from None
            raise
        if not run["is_scheduler"]:
            raise Fail(t("{label}: noam_scheduler returned a {kind}, not a torch.optim.lr_scheduler.LRScheduler",
                         label=c.label, kind=run['kind']),
                       t("the training loop steps a torch scheduler with scheduler.step(): return one, e.g. "
                         "LambdaLR(optimizer, lambda s: ...), not a wrapper of your own"))
        lrs = run["lrs"]
        for k, (first, second) in enumerate(zip(lrs, run["second"]), start=1):
            if not _close(second, first):
                raise Fail(t("{label}, an optimizer with two param groups: during optimizer.step() number {k} the "
                             "second group's lr is {second}, the first's {first}", label=c.label, k=k,
                             second=repr(second), first=repr(first)),
                           t("LambdaLR calls the lambda once per param group and step, so a lambda that counts its "
                             "own calls, or state kept between them, moves on twice per step with two groups: compute "
                             "the rate from the step LambdaLR passes"))
        r = lambda k: reference(k, c)  # noqa: E731 - the right rate of step k
        if lrs and all(_close(v, r(max(k - 1, 1))) for k, v in enumerate(lrs, start=1)):
            annotated = True
            continue
        for k, value in enumerate(lrs, start=1):
            if not _close(value, r(k)):
                found = (_diagnose_scheduler(kit, lrs, r) or _follows_own(kit, c, lrs)
                         or _diagnose_arguments(kit, c, lrs))
                raise Fail(t("{label}, optimizer built with lr=1.0: during optimizer.step() number {k} the lr is "
                             "{value}, expected noam_lr({k}) = {want}", label=c.label, k=k, value=repr(value),
                             want=repr(r(k))), found)
    if annotated:
        raise Accepted(t(_ANNOTATED))


# ----------------------------------------------------------------------------- helpers


def _values(kit, c, steps) -> list[float]:
    got = kit.drive(noam_values, list(steps), c.d_model, c.warmup_steps, c.factor)
    return [_float(v, f"noam_lr({s}, {c.d_model}, {c.warmup_steps}, {c.factor})") for s, v in zip(steps, got)]


def _float(value, call: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (float, int)):
        from checker.kit import describe

        raise Fail(t("{call} should return a Python float, got {got}", call=call, got=describe(value)),
                   t("noam_lr returns a number for a plain Python step: compute it with ** and min (or math) on Python "
                     "numbers, or call .item() on a tensor"))
    return float(value)


def _close(a, b) -> bool:
    return isinstance(a, (float, int)) and math.isclose(a, b, rel_tol=_RTOL, abs_tol=0.0)


def _diagnose(kit, c, got, step, value):
    """The mistake that gives the user's rates at every sampled step, else a named one that gives this step's rate
    (the error model is not asked about one number: too much gives it)."""
    def rates(m):
        return [m.impl(step, c.d_model, c.warmup_steps, c.factor) for step in _SAMPLE_STEPS]

    def same(mine, theirs):
        return len(mine) == len(theirs) and all(_close(a, b) for a, b in zip(mine, theirs))

    args = (step, c.d_model, c.warmup_steps, c.factor)
    return kit.name_mistake((), list(got), run=rates, same=same) or \
        kit.name_mistake(args, value, run=lambda m: m.impl(*args), same=_close, rewrites=False)


def _follows_own(kit, c, lrs):
    """A scheduler that is right about steps but built on a wrong noam_lr: say so."""
    try:
        own = _values(kit, c, range(1, len(lrs) + 1))
    except (Fail, UserError):
        return None
    if all(_close(v, w) for v, w in zip(lrs, own)):
        return t("your scheduler gives step k your own noam_lr(k), which is wrong (see the numerics checks): fix "
                 "noam_lr and the scheduler follows")
    return None


def _diagnose_arguments(kit, c, lrs):
    """A scheduler whose lambda calls noam_lr with other arguments than its own."""
    mistakes = [
        Mistake("factor not passed on", lambda k: _noam(k, c.d_model, c.warmup_steps, 1.0),
                "your scheduler calls noam_lr without its factor, so the rate is the one for factor=1.0: pass factor "
                "on, lambda s: noam_lr(s + 1, d_model, warmup_steps, factor)"),
        Mistake("d_model and warmup_steps swapped", lambda k: _noam(k, c.warmup_steps, c.d_model, c.factor),
                "your scheduler calls noam_lr with d_model and warmup_steps swapped: pass them in noam_lr's order, "
                "lambda s: noam_lr(s + 1, d_model, warmup_steps, factor)"),
    ]
    return kit.name_mistake((), lrs, mistakes, run=lambda m: [m.impl(k) for k in range(1, len(lrs) + 1)],
                            same=lambda got, wrong: all(_close(v, w) for v, w in zip(got, wrong)))


def _diagnose_scheduler(kit, lrs, r):
    return kit.name_mistake((), lrs, _SCHEDULER_MISTAKES, run=lambda m: [m.impl(r, k) for k in range(1, len(lrs) + 1)],
                            same=lambda got, wrong: all(w is None or _close(v, w) for v, w in zip(got, wrong)))
