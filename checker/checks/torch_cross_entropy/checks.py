"""Hidden checks: cross-entropy with label smoothing and an ignore index, class axis last."""

import math

import torch
import torch.nn.functional as F

from checker.kit import Fail, Mistake, UserError, at_line, case, check, compare, expect_structure, matches, raised
from checker.lang import t

TARGET = "cross_entropy"
OUTPUTS = [("loss", "() a scalar")]
DEVICE = True  # a one-hot target or a mask made inside must follow the logits' device

# Every dimension its own size; logits of rank 3, 2 and 4 (class axis last, so a (B, T, C) input
# normalised over dim=1 fails); ε = 0 once and three different ε; ignore_index -100 and 0 (the
# interview tutorial's PAD id), every case with some positions ignored and most kept.
CASES = [
    case(1, B=2, T=5, C=7, ignore_index=-100, eps=0.0),
    case(2, N=9, C=6, ignore_index=-100, eps=0.1),
    case(3, B=3, T=4, C=11, ignore_index=0, eps=0.2),
    case(4, B=2, H=3, T=4, C=5, ignore_index=-100, eps=0.15),
    case(6, N=5, C=4, ignore_index=-100, eps=1.0),  # the contract's other end: all the mass spread uniformly
]
TIMING = case(5, B=16, T=128, C=1000, ignore_index=-100, eps=0.1)
_IGNORED = 3  # positions set to ignore_index in every case (besides the targets that happen to equal it)
# A loss near 1e4 from logits of size 1e4 in float32: the logits themselves carry 1e-3 of rounding,
# so every correct method agrees to ~1e-7 relative; a real mistake gives inf, NaN or an order-1 error.
_LARGE_TOL = {"float64": (1e-9, 1e-6), "float32": (1e-4, 1e-3)}


def _leading(c):
    return [c.dims[k] for k in ("B", "H", "T", "N") if k in c.dims]


def _logits(c, dtype, scale=2.0):
    g = c.generator()
    x = scale * torch.randn(_leading(c) + [c.C], generator=g, dtype=torch.float64)
    return x.to(getattr(torch, dtype))


def _target(c):
    g = c.generator(salt=1)
    t = torch.randint(0, c.C, _leading(c), generator=g)
    flat = t.view(-1)
    flat[torch.randperm(flat.numel(), generator=g)[:_IGNORED]] = c.ignore_index
    return t


def inputs(c, dtype):
    return _logits(c, dtype), _target(c), c.ignore_index, c.eps


# ----------------------------------------------------------------------------- named mistakes


def _parts(logits, target, ignore_index, dim=-1):
    log_p = logits.log_softmax(dim)
    keep = target != ignore_index
    nll = -log_p.gather(-1, (target * keep).unsqueeze(-1)).squeeze(-1)
    return log_p, keep, nll


def _mean(loss, keep):
    return loss.masked_fill(~keep, 0.0).sum() / keep.sum()


def _annotated(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p, keep, nll = _parts(logits, target, ignore_index)
    C = logits.shape[-1]
    rest = -log_p.sum(-1) - nll  # -Σ over the non-target classes
    return _mean((1 - label_smoothing) * nll + label_smoothing / (C - 1) * rest, keep)


def _non_targets_over_c(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p, keep, nll = _parts(logits, target, ignore_index)
    C = logits.shape[-1]
    rest = -log_p.sum(-1) - nll
    return _mean((1 - label_smoothing) * nll + label_smoothing / C * rest, keep)


def _mean_over_all(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p, keep, nll = _parts(logits, target, ignore_index)
    loss = (1 - label_smoothing) * nll + label_smoothing * -log_p.mean(-1)
    return loss.masked_fill(~keep, 0.0).mean()


def _smooth_on_ignored(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p, keep, nll = _parts(logits, target, ignore_index)
    return ((1 - label_smoothing) * nll.masked_fill(~keep, 0.0) + label_smoothing * -log_p.mean(-1)).sum() / keep.sum()


def _no_one_minus(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p, keep, nll = _parts(logits, target, ignore_index)
    return _mean(nll + label_smoothing * -log_p.mean(-1), keep)


def _smooth_sum(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p, keep, nll = _parts(logits, target, ignore_index)
    return _mean((1 - label_smoothing) * nll + label_smoothing * -log_p.sum(-1), keep)


def _no_smoothing(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p, keep, nll = _parts(logits, target, ignore_index)
    return _mean(nll, keep)


def _sum(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p, keep, nll = _parts(logits, target, ignore_index)
    return ((1 - label_smoothing) * nll + label_smoothing * -log_p.mean(-1)).masked_fill(~keep, 0.0).sum()


def _mean_of_row_means(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p, keep, nll = _parts(logits, target, ignore_index)
    loss = ((1 - label_smoothing) * nll + label_smoothing * -log_p.mean(-1)).masked_fill(~keep, 0.0)
    return loss.sum() / keep.sum() if loss.dim() < 2 else (loss.sum(-1) / keep.sum(-1)).mean()


def _sign_flipped(logits, target, ignore_index=-100, label_smoothing=0.0):
    return -cross_entropy_ref(logits, target, ignore_index, label_smoothing)


def _ignore_fixed(logits, target, ignore_index=-100, label_smoothing=0.0):
    return cross_entropy_ref(logits, target, -100, label_smoothing)


def _nothing_ignored(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p = logits.log_softmax(-1)
    nll = -log_p.gather(-1, target.clamp(0, logits.shape[-1] - 1).unsqueeze(-1)).squeeze(-1)
    return ((1 - label_smoothing) * nll + label_smoothing * -log_p.mean(-1)).mean()


def _class_axis_1(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p = logits.log_softmax(1)
    keep = target != ignore_index
    nll = -log_p.gather(-1, (target * keep).unsqueeze(-1)).squeeze(-1)
    return _mean((1 - label_smoothing) * nll + label_smoothing * -log_p.mean(-1), keep)


def _log_of_softmax(logits, target, ignore_index=-100, label_smoothing=0.0):
    keep = target != ignore_index
    log_p = logits.softmax(-1).log()
    nll = -log_p.gather(-1, (target * keep).unsqueeze(-1)).squeeze(-1)
    return _mean((1 - label_smoothing) * nll + label_smoothing * -log_p.mean(-1), keep)


def _exp_overflow(logits, target, ignore_index=-100, label_smoothing=0.0):
    keep = target != ignore_index
    e = logits.exp()
    log_p = (e / e.sum(-1, keepdim=True)).log()
    nll = -log_p.gather(-1, (target * keep).unsqueeze(-1)).squeeze(-1)
    return _mean((1 - label_smoothing) * nll + label_smoothing * -log_p.mean(-1), keep)


def cross_entropy_ref(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p, keep, nll = _parts(logits, target, ignore_index)
    return _mean((1 - label_smoothing) * nll + label_smoothing * -log_p.mean(-1), keep)


_OVERFLOW = ("your loss equals log(exp(x) / sum(exp(x))): exp of a logit above 709 (88 in float32) is inf and inf/inf "
            "is NaN. Use log-probabilities computed stably: log_p = logits - torch.logsumexp(logits, -1, keepdim=True)")
_LOG_SOFTMAX = ("your loss equals log(softmax(x)): softmax is stable, but a probability below 1e-308 (1e-38 in float32) "
               "rounds to 0 and its log is -inf. Use log-probabilities directly: logits - torch.logsumexp(logits, -1, "
               "keepdim=True), or logits.log_softmax(-1)")

MISTAKES = [
    Mistake("ε/(C-1) to the other classes", _annotated,
            "your loss gives ε/(C-1) to each NON-target class (the Annotated Transformer's LabelSmoothing): PyTorch's "
            "label smoothing (and this kata's) gives ε/C to EVERY class, the target included: "
            "(1 - ε)·nll + ε·mean over all C classes of -log p"),
    Mistake("ε/C to the other classes only", _non_targets_over_c,
            "your loss gives ε/C to the non-target classes only, so the smoothed target sums to 1 - ε/C: the uniform "
            "part covers ALL C classes, the target included: (1 - ε)·nll + ε·(-log_p).mean(-1)"),
    Mistake("smoothing summed over classes", _smooth_sum,
            "your smoothing term sums -log p over the C classes: it is the MEAN over the classes (ε/C each), "
            "ε·(-log_p).mean(-1)"),
    Mistake("label smoothing ignored", _no_smoothing,
            "your loss ignores label_smoothing: add ε·(mean over the classes of -log p) and weight the NLL by (1 - ε)"),
    Mistake("mean over every position", _mean_over_all,
            "your loss is divided by the number of ALL positions, ignored ones included: divide the sum by the number "
            "of kept positions, (target != ignore_index).sum()"),
    Mistake("smoothing applied to ignored positions", _smooth_on_ignored,
            "your smoothing term still counts the ignored positions: mask the whole per-position loss, "
            "((1 - ε)·nll + ε·smooth) at kept positions only"),
    Mistake("nothing ignored", _nothing_ignored,
            "your loss counts every position, ignored ones included: skip the positions whose target == ignore_index "
            "(mask them out of the sum and out of the count)"),
    Mistake("mean of per-row means", _mean_of_row_means,
            "your loss averages each row (sequence) first, then the rows: a short row then weighs as much as a long "
            "one; the mean is over every kept POSITION at once, sum of the losses / number of kept positions"),
    Mistake("log of softmax", _log_of_softmax, _LOG_SOFTMAX),
    Mistake("exp overflow", _exp_overflow, _OVERFLOW),
]




def _verify(kit, args, what, tol=None):
    got = kit.user(args)
    want = kit.reference(args)
    try:
        compare(got, want, "loss", "() a scalar", tol=tol)
    except Fail as fail:
        found = kit.name_mistake(args, got, tol=tol) if isinstance(got, torch.Tensor) else None
        raise Fail(t("{what}: {fail}", what=what, fail=fail.message), found or fail.diagnosis) from None
    return got


# ----------------------------------------------------------------------------- checks


@check("structure", "cross_entropy is a function cross_entropy(logits, target, ignore_index, label_smoothing)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["logits", "target", "ignore_index", "label_smoothing"])


@check("numerics", "the defaults: cross_entropy(logits, target) ignores -100 and does not smooth")
def defaults(kit):
    c = CASES[1]
    logits, target, _, _ = kit.inputs(c)
    got, want = kit.user((logits, target)), kit.reference((logits, target))
    try:
        compare(got, want, "loss", "() a scalar")
    except Fail as fail:
        raise Fail(t("{label}, called as cross_entropy(logits, target): {fail}; the defaults are ignore_index=-100 and "
                     "label_smoothing=0.0", label=c.label, fail=fail)) from None


@check("numerics", "stability: logits of size 1e4 give a finite loss (float64 and float32)")
def large_logits(kit):
    c = CASES[3]
    for dtype in ("float64", "float32"):
        _, target, ignore_index, eps = kit.inputs(c)
        args = (_logits(c, dtype, scale=1e4), target, ignore_index, eps)
        got = kit.user(args)
        if isinstance(got, torch.Tensor) and got.ndim == 0 and not torch.isfinite(got):
            found = kit.name_mistake(args, got)
            why = found or t("compute log-probabilities stably: logits - torch.logsumexp(logits, -1, keepdim=True)")
            raise Fail(t("{label}, {dtype}, logits of size 1e4: the loss is {loss}. {why}", label=c.label, dtype=dtype,
                         loss=got.item(), why=why))
        _verify(kit, args, t("{label}, {dtype}, logits of size 1e4", label=c.label, dtype=dtype), _LARGE_TOL[dtype])


@check("masking", "logits at ignored positions have no effect on the loss")
def ignored_logits_unused(kit):
    for c in (CASES[0], CASES[2]):
        logits, target, ignore_index, eps = kit.inputs(c)
        changed = logits.clone()
        changed[target == ignore_index] = 50 * torch.randn(changed[target == ignore_index].shape,
                                                           generator=c.generator(salt=5), dtype=logits.dtype)
        try:
            before = kit.user((logits, target, ignore_index, eps))
            after = kit.user((changed, target, ignore_index, eps))
        except UserError as err:
            if f"index {ignore_index} is out of bounds" not in err.text:
                raise
            raise raised(c.label, err, t("you index the logits with ignore_index ({ignore_index}), which is no class: replace the "
                         "ignored targets with a valid class first, target.masked_fill(target == ignore_index, 0), "
                         "then gather, and leave those positions out of the mean", ignore_index=ignore_index)) from None
        if not isinstance(before, torch.Tensor) or not isinstance(after, torch.Tensor) or before.shape != after.shape:
            return  # the shapes check reports it
        if not matches(after, before):
            raise Fail(t("{label}: changing the logits where target == ignore_index ({ignore_index}) changed the loss "
                         "from {before:.6g} to {after:.6g}: ignored positions must not count at all, neither their NLL "
                         "nor their smoothing term, nor in the count you divide by", label=c.label,
                         ignore_index=ignore_index, before=before.item(), after=after.item()))


def _all_ignored_why():
    return t("Follow-up: what does your loss return for a batch where every target is padding? The mean over no "
             "position is 0 / 0: F.cross_entropy returns NaN, and so does this kata's reference, which lets an empty "
             "batch show instead of training on it silently; a count clamped to 1 returns 0, and an error stops the "
             "run. Say which you chose and why: a NaN loss that reaches backward() and optimizer.step() turns every "
             "weight into NaN")


@check("masking", "every position ignored: the mean over no position is NaN (0 / 0), as F.cross_entropy",
       followup=True)
def all_ignored(kit):
    # Beyond the textbook answer (code right on every batch with one kept target can give 0, NaN or an
    # error here), so a follow-up question, not a failure: see _all_ignored_why.
    c = CASES[2]
    logits, target, ignore_index, eps = kit.inputs(c)
    args = (logits, torch.full_like(target, ignore_index), ignore_index, eps)
    try:
        got = kit.user(args)
    except UserError as err:
        if err.not_implemented:
            raise
        raise Fail(t("{label}, every target == ignore_index: your code raised {err}{where}. {why}", label=c.label,
                     err=err, where=at_line(err), why=_all_ignored_why())) from None
    if not isinstance(got, torch.Tensor) or got.ndim != 0:
        compare(got, kit.reference(args), "loss", "() a scalar")
    if not torch.isnan(got):
        raise Fail(t("{label}, every target == ignore_index: your loss is {loss:.6g}, where F.cross_entropy gives NaN. "
                     "{why}", label=c.label, loss=got.item(), why=_all_ignored_why()))


@check("properties", "equal logits give log C whatever ε; a confident right prediction costs only the smoothing term")
def limits(kit):
    c = CASES[1]
    _, target, ignore_index, eps = kit.inputs(c)
    flat = torch.zeros(target.shape + (c.C,), dtype=torch.float64)
    got = kit.user((flat, target, ignore_index, eps))
    compare(got, torch.tensor(math.log(c.C), dtype=torch.float64), t("{label}, all logits equal: loss", label=c.label),
            "() a scalar")
    # the target class 20 above the rest: nll ≈ 0, and each smoothing term ≈ 20 · (C - 1) / C
    sharp = 20.0 * F.one_hot(target.clamp(min=0), c.C).to(torch.float64)
    _verify(kit, (sharp, target, ignore_index, eps), t("{label}, the target's logit 20 above the others", label=c.label))
