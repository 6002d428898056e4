"""Hidden checks: a reward model's Bradley–Terry loss on the last-token rewards (InstructGPT, Llama 2's margin)."""

import torch

from checker.kit import Fail, Mistake, case, check, compare, expect_raises, expect_structure, matches
from checker.lang import t

TARGET = "reward_model_loss"
OUTPUTS = [("loss", "()"), ("chosen_rewards", "(B,)"), ("rejected_rewards", "(B,)")]

# Every dimension its own size, T_c != T_r (so the two masks cannot be exchanged). Right padding, left padding, and
# both in one batch (alternate rows): the last real token is at T - 1, at mask.sum() - 1, or at neither. Row 0 is
# never padded, the last row holds one token only; every other row has a length of its own, at least 1. Padding positions hold scores of the same
# spread as real ones, so a reward read anywhere else is off by units. A margin in half the cases (Llama 2's
# discrete margins, 0 to 1), None in the others.
CASES = [
    case(1, B=3, T_c=7, T_r=5, padding="right", margin=False),
    case(2, B=4, T_c=6, T_r=9, padding="left", margin=True),
    case(3, B=5, T_c=8, T_r=4, padding="left in some rows, right in others", margin=True),
    case(4, B=2, T_c=5, T_r=10, padding="left in some rows, right in others", margin=False),
]
TIMING = case(5, B=64, T_c=512, T_r=480, padding="left in some rows, right in others", margin=True)
_HUGE = 1000.0  # the scores times this: differences of thousands, where log(sigmoid) is -inf in float64


def _mask(c, T, salt):
    g = c.generator(salt=salt)
    mask = torch.zeros(c.B, T, dtype=torch.bool)
    for b in range(c.B):
        length = T if b == 0 else 1 if b == c.B - 1 else int(torch.randint(1, T, (1,), generator=g))
        left = c.padding == "left" or (c.padding != "right" and b % 2 == 1)
        if left:
            mask[b, T - length:] = True
        else:
            mask[b, :length] = True
    return mask


def inputs(c, dtype, scale=1.0):
    d = getattr(torch, dtype)
    chosen = scale * 2.0 * torch.randn(c.B, c.T_c, generator=c.generator(salt=1), dtype=torch.float64)
    rejected = scale * 2.0 * torch.randn(c.B, c.T_r, generator=c.generator(salt=2), dtype=torch.float64)
    margin = torch.randint(0, 4, (c.B,), generator=c.generator(salt=3)).to(torch.float64) / 3 if c.margin else None
    return (chosen.to(d), _mask(c, c.T_c, 4), rejected.to(d), _mask(c, c.T_r, 5),
            None if margin is None else margin.to(d))


def _last(mask):
    """Each row's last True index, the independent way: T - 1 - (first True of the flipped row)."""
    return mask.shape[1] - 1 - mask.flip(1).to(torch.int64).argmax(dim=1)


# ----------------------------------------------------------------------------- named mistakes
# Two the error model (checker/kit/errormodel.py) cannot say; every other slip of this kata it names by itself.


def _loss(chosen, rejected, margin):
    diff = chosen - rejected if margin is None else chosen - rejected - margin
    return -torch.nn.functional.logsigmoid(diff).mean(), chosen, rejected


def _length_minus_one(cs, cm, rs, rm, margin=None):
    """The reward at index mask.sum() - 1, the length minus one: right only under right padding. The reference finds
    the index as torch.where(mask, positions, -T).argmax(dim=1); no single rewrite of that expression counts the mask."""
    def pick(s, m):
        return s.gather(1, (m.sum(dim=1) - 1).unsqueeze(1)).squeeze(1)

    return _loss(pick(cs, cm), pick(rs, rm), margin)


def _last_column(cs, cm, rs, rm, margin=None):
    """scores[:, -1], the mask not read: right only where a row is not padded on the right. No rewrite of the
    reference reads a fixed column. The one that fits, argmax(dim=None), fits by a coincidence of the inputs (the
    flat argmax lands on the last column of row 0, which is never padded) and would send the learner to an axis."""
    return _loss(cs[:, -1], rs[:, -1], margin)


MISTAKES = [
    Mistake("reward at the length minus one", _length_minus_one,
            "your reward is the score at index mask.sum(1) - 1, the sequence's length minus one: that is the last "
            "real token only when the padding is on the right. With left padding the real tokens end at T - 1; take "
            "the rightmost True of the mask, e.g. torch.where(mask, torch.arange(T), -1).argmax(dim=1), as Hugging Face's "
            "sequence-classification models do"),
    Mistake("reward at the last column", _last_column,
            "your reward is scores[:, -1], the last column: under right padding that is a padding position. The "
            "reward is the score at each sequence's last REAL token, the rightmost True of its attention mask, "
            "torch.where(mask, torch.arange(T), -1).argmax(dim=1)"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "reward_model_loss(chosen_scores, chosen_mask, rejected_scores, rejected_mask, margin) is a "
                    "function")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["chosen_scores", "chosen_mask", "rejected_scores",
                                                        "rejected_mask", "margin"])


@check("masking", "only the score at each sequence's last real token counts: every other score changes nothing")
def last_token_only(kit):
    for c in (CASES[1], CASES[2]):
        args = kit.inputs(c)
        before = kit.outputs(args, case=c)
        if before is None:
            return
        g = c.generator(salt=9)
        changed = []
        for scores, mask in ((args[0], args[1]), (args[2], args[3])):
            keep = torch.zeros_like(mask)
            keep[torch.arange(c.B), _last(mask)] = True
            changed.append(torch.where(keep, scores, 5.0 * torch.randn(scores.shape, generator=g, dtype=scores.dtype)))
        after = kit.outputs((changed[0], args[1], changed[1], args[3], args[4]), case=c)
        if after is None:
            return
        for (name, _), b, a in zip(OUTPUTS, before, after):
            if not matches(a, b):
                raise Fail(t("{label}: changing every score except each sequence's last real token's changed the {name}",
                             label=c.label, name=name),
                           kit.diagnose(c, "float64", before) or t(
                               "a sequence's reward is ONE score, at its last real token, the rightmost True of its "
                               "attention mask: not a mean over the tokens, not the first token, not a fixed column. "
                               "torch.where(mask, torch.arange(T), -1).argmax(dim=1) finds it under left and right padding"))


@check("numerics", "the default margin is None: reward_model_loss(...) without it gives the loss without a margin")
def default_margin(kit):
    c = CASES[0]
    args = kit.inputs(c)[:4]
    got, want = kit.outputs(args, case=c), kit.reference(args)
    if got is None:
        return
    try:
        compare(got[0], want[0], "loss", "()")
    except Fail as fail:
        if not matches(kit.outputs(args + (None,), case=c)[0], want[0]):
            raise Fail(t("{label}, called without margin: {fail}; with margin=None passed explicitly it differs too, "
                         "so the default is not the cause", label=c.label, fail=fail.message)) from None
        raise Fail(t("{label}, called without margin: {fail}; the default is margin=None, no margin",
                     label=c.label, fail=fail.message)) from None


@check("numerics", "stability: scores 1000 times larger (differences in the thousands) give a finite loss, float64 "
                   "and float32")
def large_differences(kit):
    c = CASES[1]
    for dtype in ("float64", "float32"):
        args = inputs(c, dtype, scale=_HUGE)
        got = kit.outputs(args, case=c)
        if got is None:
            return
        what = t("{label}, {dtype}, scores × {scale:g}", label=c.label, dtype=dtype, scale=_HUGE)
        if not torch.isfinite(got[0]).all():
            raise Fail(t("{what}: the loss is {loss}", what=what, loss=got[0].item()),
                       t("-log σ(z) computed as -log(sigmoid(z)) (or log(1 + exp(-z))) is inf where z is a large "
                         "negative number: σ(z) rounds to 0 below z ≈ -745 in float64, -104 in float32. Use "
                         "-F.logsigmoid(z), or F.softplus(-z)"))
        try:
            compare(got[0], kit.reference(args)[0], "loss", "()", tol=(1e-6, 1e-3) if dtype == "float32" else None)
        except Fail as fail:
            raise Fail(t("{what}: {fail}", what=what, fail=fail.message), fail.diagnosis) from None


@check("properties", "a chosen and a rejected sequence that score the same give the loss log 2 without a margin")
def equal_rewards(kit):
    c = CASES[2]
    chosen, chosen_mask, _, _, _ = kit.inputs(c)
    got = kit.outputs((chosen, chosen_mask, chosen.clone(), chosen_mask.clone(), None), case=c)
    if got is None:
        return
    compare(got[0], torch.log(torch.tensor(2.0, dtype=torch.float64)),
            t("{label}, the chosen sequences passed as the rejected ones too: loss (-log σ(0) = log 2)",
              label=c.label), "()")


@check("properties", "a margin that is not (B,) raises ValueError")
def margin_shape(kit):
    chosen, chosen_mask, rejected, rejected_mask, margin = kit.inputs(CASES[1])
    expect_raises([(f"reward_model_loss(..., margin of shape {tuple(bad.shape)})",
                    lambda bad=bad: kit.user((chosen, chosen_mask, rejected, rejected_mask, bad)))
                   for bad in (margin.unsqueeze(1), margin[0])],
                  t("a (B, 1) margin broadcasts against the (B,) differences into a (B, B) grid, every chosen reward "
                    "against every rejected one, and a 0-dim one applies one margin to every pair; the mean hides "
                    "both"))
