"""Hidden checks: PPO's token-level loss for LLM fine-tuning (clipped surrogate, clipped value loss, entropy bonus)."""

import torch
import torch.nn.functional as F

from checker.kit import Fail, Mistake, UserError, case, check, compare, expect_raises, expect_structure, matches
from checker.lang import t

TARGET = "ppo_loss"
OUTPUTS = [("loss", "()"), ("pg_loss", "()"), ("vf_loss", "()"), ("entropy", "()")]
GRADIENTS = False  # the gradient check below differentiates the loss w.r.t. what is trained (old_* come detached)

# Every dimension its own size; both reductions twice (per_sequence: reduction="sequence"); clip ranges,
# coefficients, and ent_coef = 0 (TRL's) once. old_logprobs = logprobs + 0.35·randn: ratios over ~[0.5, 2], so the
# clip is active on about half the tokens, on both sides, for advantages of both signs. values = old_values + randn:
# the value clip is active on about half the tokens for every clip_value, and beyond a range of 1.0 too, so that a
# range written into the code is told apart. Every row has its own response length (row 0 full), so the two
# reductions differ, and a mean over T or over every position differs from the masked one.
CASES = [
    case(1, B=3, T=6, V=7, clip_eps=0.2, clip_value=0.2, vf_coef=0.1, ent_coef=0.01, per_sequence=False),
    case(2, B=4, T=5, V=9, clip_eps=0.1, clip_value=0.3, vf_coef=0.5, ent_coef=0.05, per_sequence=True),
    case(3, B=2, T=8, V=5, clip_eps=0.3, clip_value=0.1, vf_coef=1.0, ent_coef=0.1, per_sequence=False),
    case(4, B=5, T=4, V=11, clip_eps=0.2, clip_value=0.5, vf_coef=0.25, ent_coef=0.0, per_sequence=True),
]
TIMING = case(5, B=32, T=256, V=512, clip_eps=0.2, clip_value=0.2, vf_coef=0.1, ent_coef=0.01, per_sequence=False)


def _mask(c):
    g = c.generator(salt=8)
    lengths = [c.T] + [int(torch.randint(1, c.T, (1,), generator=g)) for _ in range(c.B - 1)]
    return torch.arange(c.T).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)  # (B, T)


def _tensors(c):
    """The eight tensors in float64: logits, the log-probabilities of sampled tokens, and the rollout's numbers."""
    def randn(*shape, salt):
        return torch.randn(*shape, generator=c.generator(salt=salt), dtype=torch.float64)

    logits = 2.0 * randn(c.B, c.T, c.V, salt=1)
    tokens = torch.randint(0, c.V, (c.B, c.T), generator=c.generator(salt=2))
    logprobs = torch.gather(F.log_softmax(logits, dim=-1), 2, tokens.unsqueeze(-1)).squeeze(-1)
    old_logprobs = logprobs + 0.35 * randn(c.B, c.T, salt=3)
    advantages = randn(c.B, c.T, salt=4)
    old_values = randn(c.B, c.T, salt=5)
    values = old_values + randn(c.B, c.T, salt=6)
    returns = old_values + randn(c.B, c.T, salt=7)
    return [logprobs, old_logprobs, advantages, values, old_values, returns, logits, _mask(c)]


def _settings(c):
    """The five settings; a case names its reduction by per_sequence (True: "sequence", False: "token")."""
    return c.clip_eps, c.clip_value, c.vf_coef, c.ent_coef, "sequence" if c.per_sequence else "token"


def inputs(c, dtype):
    d = getattr(torch, dtype)
    tensors = [x.to(d) if x.is_floating_point() else x for x in _tensors(c)]
    return (*tensors, *_settings(c))


# ----------------------------------------------------------------------------- named mistakes
# Two the error model (checker/kit/errormodel.py) cannot say; every other slip of this kata it names by itself.


def _ppo(logprobs, old_logprobs, advantages, values, old_values, returns, logits, mask, clip_eps=0.2, clip_value=0.2,
         vf_coef=0.1, ent_coef=0.01, reduction="token", *, clip_values=True, over_T=False):
    """ppo_loss with knobs; every knob at its default gives the right answer."""
    m = mask.to(logprobs.dtype)

    def mean(x):
        if reduction == "token":
            return (x * m).sum() / m.sum()
        return ((x * m).mean(dim=1) if over_T else (x * m).sum(dim=1) / m.sum(dim=1)).mean()

    ratio = torch.exp(logprobs - old_logprobs)
    pg_loss = mean(torch.max(-advantages * ratio, -advantages * ratio.clamp(1 - clip_eps, 1 + clip_eps)))
    v_clipped = torch.clamp(values, old_values - clip_value, old_values + clip_value) if clip_values else values
    vf_loss = 0.5 * mean(torch.max((values - returns) ** 2, (v_clipped - returns) ** 2))
    log_p = F.log_softmax(logits, dim=-1)
    entropy = mean(-(log_p.exp() * log_p).sum(dim=-1))
    return pg_loss + vf_coef * vf_loss - ent_coef * entropy, pg_loss, vf_loss, entropy


def _variant(**knobs):
    def wrong(*args):
        return _ppo(*args, **knobs)

    return wrong


MISTAKES = [
    # The value loss without its clip, 0.5·(v - R)². Three single rewrites of the reference give it exactly, on any
    # input: the clamp dropped; old_values read as values (the clamp's range is then empty); the second square made
    # (R - R)², which max() never picks. The error model says a change only where at most two kinds fit, so it says
    # none. A clip centred on the returns gives the same numbers: it never moves a value the max would see.
    Mistake("value loss unclipped", _variant(clip_values=False),
            "your value loss is 0.5·(values - returns)², unclipped: PPO (TRL, and CleanRL's default clip_vloss) also "
            "clips the new value to old_values ± clip_value and takes the larger of the two squared errors, "
            "max((v - R)², (clip(v, v_old - ε_v, v_old + ε_v) - R)²), so that the critic moves as cautiously as the "
            "policy. The clip is centred on old_values, not on the returns"),
    # Per sequence, each row's masked sum divided by the padded length T ((x * mask).mean(dim=1)). No single rewrite
    # of the reference's (x * m).sum(dim=1) / m.sum(dim=1) divides by T: the numerator's sum made a mean AND the
    # denominator dropped are two changes, and the error model pairs only the rewrites that came nearest alone.
    Mistake("per-sequence mean over T", _variant(over_T=True),
            "your per-sequence mean divides each row's masked sum by the padded length T, (x * mask).mean(dim=1): a "
            "sequence's mean is over its own response tokens, (x * mask).sum(dim=1) / mask.sum(dim=1), then the mean "
            "over the sequences"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "ppo_loss(logprobs, old_logprobs, advantages, values, old_values, returns, logits, mask, ...) "
                    "is a function")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["logprobs", "old_logprobs", "advantages", "values",
                                                        "old_values", "returns", "logits", "mask", "clip_eps",
                                                        "clip_value", "vf_coef", "ent_coef", "reduction"])


@check("numerics", "the defaults are clip_eps=0.2, clip_value=0.2, vf_coef=0.1, ent_coef=0.01, reduction=\"token\"")
def defaults(kit):
    c = CASES[1]
    args = kit.inputs(c)[:8]
    got, want = kit.outputs(args, case=c), kit.reference(args, case=c)
    if got is None:
        return
    try:
        for (name, legend), u, e in zip(OUTPUTS, got, want):
            compare(u, e, name, legend)
    except Fail as fail:
        explicit = kit.outputs(args + (0.2, 0.2, 0.1, 0.01, "token"), case=c)
        if explicit is None or not all(matches(u, e) for u, e in zip(explicit, want)):
            raise Fail(t("{label}, called with the eight tensors only: {fail}; with the defaults passed explicitly it "
                         "differs too, so the defaults are not the cause", label=c.label, fail=fail.message)) from None
        raise Fail(t("{label}, called with the eight tensors only: {fail}; the defaults are clip_eps=0.2, "
                     "clip_value=0.2, vf_coef=0.1 (TRL's), ent_coef=0.01 (CleanRL's) and reduction=\"token\"",
                     label=c.label, fail=fail.message)) from None


@check("masking", "numbers at padding positions (mask False) change nothing, in any of the eight tensors")
def padding_unused(kit):
    for c in (CASES[0], CASES[1]):
        args = kit.inputs(c)
        mask = args[7]
        before = kit.outputs(args, case=c)
        if before is None:
            return
        g = c.generator(salt=9)
        noisy = []
        for x in args[:7]:
            hidden = ~mask.unsqueeze(-1) if x.ndim == 3 else ~mask
            noisy.append(torch.where(hidden, 3.0 * torch.randn(x.shape, generator=g, dtype=x.dtype) - 2.0, x))
        after = kit.outputs((*noisy, *args[7:]), case=c)
        if after is None:
            return
        for (name, _), b, a in zip(OUTPUTS, before, after):
            if not matches(a, b):
                raise Fail(t("{label}: changing the numbers where the mask is False changed the {name} "
                             "from {before:.6g} to {after:.6g}", label=c.label, name=name,
                             before=b.item(), after=a.item()),
                           kit.diagnose(c, "float64", before) or t(
                               "a per-token term is not masked: only the response tokens count, in the sum and in the "
                               "count divided by, (x * mask).sum() / mask.sum() (per sequence: along dim 1, then the "
                               "mean over the rows); padding holds numbers too, not zeros"))


@check("gradients", "the loss's gradients w.r.t. logprobs, values and logits match the reference")
def gradients(kit):
    one = torch.tensor(1.0, dtype=torch.float64)
    zero = torch.tensor(0.0, dtype=torch.float64)
    for c in CASES:
        want = kit.gradients(c, [one, zero, zero, zero], user=False)["args"]
        try:
            got = kit.gradients(c, [one, zero, zero, zero], user=True)["args"]
        except UserError as err:
            if err.not_implemented or "does not require grad" not in err.text:
                raise
            raise Fail(t("{label}: your loss has no gradient at all (backward raised \"{error}\")", label=c.label,
                         error=err.message),
                       t("the loss is computed from detached values (.detach(), .item(), torch.no_grad()): only "
                         "old_logprobs, old_values, advantages and returns are constants; the loss must stay "
                         "differentiable in logprobs, values and logits"), line=None) from None
        for i, name in ((0, "logprobs"), (3, "values"), (6, "logits")):
            if got[i] is None:
                raise Fail(t("{label}: no gradient reaches {name}: the loss must stay differentiable in logprobs, "
                             "values and logits (no .detach(), .item() or torch.no_grad())", label=c.label, name=name))
            try:
                compare(got[i], want[i], t("gradient of {name}", name=name))
            except Fail as fail:
                raise Fail(t("{label}: {fail}", label=c.label, fail=fail)) from None


@check("properties", "on the first step (old_logprobs = logprobs) pg_loss is -mean(A) over the response tokens")
def first_step(kit):
    c = CASES[2]
    args = list(kit.inputs(c))
    args[1] = args[0].clone()
    got = kit.outputs(tuple(args), case=c)
    if got is None:
        return
    m = args[7].to(torch.float64)
    want = -(args[2] * m).sum() / m.sum()
    compare(got[1], want, t("{label}, old_logprobs = logprobs: pg_loss (the ratio is 1 everywhere, no clip is "
                            "active)", label=c.label), "()")


@check("properties", "a reduction other than \"token\" or \"sequence\" raises ValueError")
def bad_reduction(kit):
    args = kit.inputs(CASES[0])[:8]
    expect_raises([(f"ppo_loss(..., reduction={name!r})",
                    lambda name=name: kit.user(args + (0.2, 0.2, 0.1, 0.01, name))) for name in ("mean", "sum")],
                  t("an unknown reduction silently falls back to one of the two, and the run trains with a "
                    "weighting nobody chose"))
