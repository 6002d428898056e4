"""Checks shared by the attention katas: the torch modules that return (out, attn), multi-head and
grouped-query, and the NumPy functions that return (output, attention_weights).

Each kata calls these with its own way of running the user's module, so the verdicts (and their
wording) are written once.
"""

import math

import numpy as np
import torch

from checker.checks.shared.masks import close, future_leak
from checker.kit import FLOAT32_INSIDE, Convention, Fail, FollowUp, UserError, compare, matches
from checker.lang import t


# LLaMA's attention computes the softmax in float32 whatever the input's dtype:
# F.softmax(scores.float(), dim=-1).type_as(xq). On float64 input that is float32 internals, about 1e-7
# off; every named mistake of the katas that accept it moves the result by far more (their reference tests).
FLOAT32_SOFTMAX = Convention(
    "float32 softmax", "LLaMA's float32 softmax was recognised (F.softmax(scores.float(), dim=-1)"
    ".type_as(q)): on float64 input your weights carry float32 rounding, about 1e-7, and are held to "
    "1e-5 here. This kata's reference keeps the input's dtype throughout (scores.softmax(dim=-1)); "
    "LLaMA upcasts because it runs in float16/bfloat16, where a softmax in half precision loses digits",
    tol=FLOAT32_INSIDE)


def hidden_keys_get_zero(c, attn, visible, advice: str = "") -> None:
    """No weight on a hidden key (visible: bool, broadcastable to attn; True = may attend)."""
    leaked = attn.masked_fill(visible.expand(attn.shape), 0.0)
    if torch.isnan(leaked).any() or (leaked != 0).any():
        b, h, i, j = (leaked.isnan() | (leaked != 0)).nonzero()[0].tolist()
        raise Fail(t("{label}: query {i} gives weight {w:.3g} to hidden key {j} (batch {b}, head {h}); fill hidden "
                     "scores with -inf before softmax (True = may attend{advice})", label=c.label, i=i,
                     w=leaked[b, h, i, j].item(), j=j, b=b, h=h, advice=advice))


def scores_returned(c, weights, expected, visible, d_k: int, *, tol=None, qk: str = "Q Kᵀ", size: str = "d_k",
                    numpy: bool = False, attn: bool = False) -> None:
    """A relation that needs no knob, asked before 'fill hidden scores with -inf' is advised: the weights are not the
    reference's (expected), but a softmax over their visible keys, after a scale of 1 or 1/√d_k, is. Then they hold
    the scores before the softmax, whatever fill hid the keys.

    visible: bool, broadcastable to weights (True = may attend); tol: the kata's tolerance for its weights. qk and
    size name the product and the size under the root as the kata writes them (q kᵀ, depth). numpy: the kata's
    arrays (the sentence says "array" and v); attn: a torch kata whose weights are called attn.
    """
    if matches(weights, expected, tol):
        return
    weights, expected = _tensor(weights), _tensor(expected)
    hidden = ~_tensor(visible).expand(weights.shape)
    for factor, before in ((1.0, t("the scores {qk} / √{size}", qk=qk, size=size)),
                           (1 / math.sqrt(d_k), t("{qk}, before the scale", qk=qk))):
        redone = (weights * factor).masked_fill(hidden, float("-inf")).softmax(-1).masked_fill(hidden, 0.0)
        if matches(redone, expected, tol):
            raise _scores_returned(c, before, numpy, attn)


def _scores_returned(c, before: str, numpy: bool, attn: bool) -> Fail:
    if attn:
        return Fail(t("{label}: attn is not the attention weights: softmax(attn, dim=-1) over the visible keys gives "
                      "the reference's weights, so attn holds {before}", label=c.label, before=before),
                    t("you return the scores before the softmax as attn: return the weights, the softmax over the keys "
                      "with hidden keys at 0, the tensor that multiplies V"))
    said = t("{label}: the weights you return are not attention weights: a softmax over their visible keys gives the "
             "reference's weights, so they hold {before}", label=c.label, before=before)
    if numpy:
        return Fail(said, t("you return the scores before the softmax as the weights: return the softmax over the "
                            "keys, hidden keys at 0, the array that multiplies v"))
    return Fail(said, t("you return the scores before the softmax as the weights: return the softmax over the keys, "
                        "hidden keys at 0, the tensor that multiplies V"))


def very_negative_verdict(c, weights, visible, *, numpy: bool = False) -> None:
    """The weights on inputs where every score is near -57000 (each kata builds them its own way; every query sees a
    key): NaN or inf is a softmax that underflows (exp(s) / exp(s).sum() is 0/0 there); weight on a hidden key, or
    visible weights that no longer sum to 1, is a finite fill such as GPT-2's -1e4, which the scores reached.

    visible: bool, broadcastable to weights; numpy: the kata's arrays (the advice says -np.inf). Raises Fail, for a
    check marked as a follow-up.
    """
    weights = _tensor(weights)
    if not torch.isfinite(weights).all():
        why = (t("Follow-up: what does your softmax do when every score is far below 0? exp() of a score near -57000 "
                 "underflows to 0, so np.exp(s) / np.exp(s).sum(...) divides 0 by 0; subtract each row's max first "
                 "(the numpy/softmax kata)") if numpy else
               t("Follow-up: what does your softmax do when every score is far below 0? exp() of a score near -57000 "
                 "underflows to 0, so a softmax written as exp(s) / exp(s).sum() divides 0 by 0; subtract each row's "
                 "max first, or call scores.softmax(dim=-1), which does"))
        raise Fail(t("{label}, every score near -57000: your weights hold NaN or inf", label=c.label), why)
    visible = _tensor(visible).expand(weights.shape)
    hidden = float(weights.masked_fill(visible, 0.0).abs().max())
    lost = float((weights.masked_fill(~visible, 0.0).sum(-1) - 1).abs().max())  # every row sees a key
    if hidden > 1e-3 or lost > 1e-3:  # the mass went to the hidden keys (then perhaps zeroed after softmax)
        why = (t("Follow-up: what if the scores are as low as your fill? A finite fill such as -1e4 (GPT-2's) hides a "
                 "key only while the real scores stay far above it; -np.inf hides it whatever the scores") if numpy else
               t("Follow-up: what if the scores are as low as your fill? A finite fill such as -1e4 (GPT-2's) hides a "
                 "key only while the real scores stay far above it; float('-inf'), or torch.finfo(scores.dtype).min, "
                 "hides it whatever the scores"))
        raise Fail(t("{label}, every score near -57000: the hidden keys take weight {hidden:.3g} and the visible "
                     "keys' weights sum to 1 - {lost:.3g}", label=c.label, hidden=hidden, lost=lost), why)


def _tensor(x) -> torch.Tensor:
    """The judgements above are written once, in torch: a NumPy array becomes a tensor (a copy, so that torch never
    sees a read-only array), a tensor leaves autograd."""
    return x.detach() if isinstance(x, torch.Tensor) else torch.from_numpy(np.array(x))


def no_future_leak(c, run, x) -> None:
    """Under a causal mask, changing positions after t leaves the output up to t unchanged. run(x) -> out."""
    leak = future_leak(run, (x,), (3.0,), same=close(1e-12, 1e-12))
    if leak:
        raise Fail(t("{label}: changing the inputs after position {pos} changed the output at position ≤ {pos}: "
                     "the future leaks into the past: check the mask, the softmax axis (the keys, dim=-1) and "
                     "that the heads are split and combined with a transpose", label=c.label, pos=leak.pos))


TORCH_FIX = "attn.masked_fill(~mask, 0.0) after softmax"  # a key of _ZH: blind_why translates it
NUMPY_FIX = "np.where(mask, weights, 0.0) after softmax"


def blind_why(fix: str = TORCH_FIX) -> str:
    """The question an interviewer asks after the textbook answer: every blind-query verdict ends with it."""
    return t("Follow-up: what should a query that may see no key return (a row of padding, or a causal mask over a "
             "left-padded batch)? A NaN there spreads to the whole batch through the loss and its gradients; this "
             "kata's reference gives zero weights and a zero attention output, e.g. {fix}", fix=t(fix))


def blind_verdict(c, where: str, nan: bool, weights=None, fix: str = TORCH_FIX) -> FollowUp:
    """The follow-up for a query that sees no key: NaN (an unguarded -inf fill) or other weights (-1e9: uniform).

    Raise it from any check: a FollowUp passes (fails under --strict) whether or not the check is marked."""
    if nan:
        return FollowUp(t("{label}: {where} sees no key and came out NaN: softmax over a row that is all -inf (the "
                          "-inf fill of the interview tutorial) is 0/0. {why}", label=c.label, where=where, why=blind_why(fix)))
    if weights is None:
        return FollowUp(t("{label}: {where} sees no key, yet its weights are not zero. {why}", label=c.label,
                          where=where, why=blind_why(fix)))
    weights = torch.as_tensor(np.asarray(weights, dtype=np.float64)) if not isinstance(weights, torch.Tensor) else weights
    if torch.allclose(weights, torch.full_like(weights, 1 / weights.numel())):
        return FollowUp(t("{label}: {where} sees no key, yet its weights are spread evenly over the hidden keys: a "
                          "large negative fill such as -1e9 (the Annotated Transformer's) turns such a row uniform. "
                          "{why}", label=c.label, where=where, why=blind_why(fix)))
    return FollowUp(t("{label}: {where} sees no key, yet its weights are {weights}. {why}", label=c.label, where=where,
                      weights=[round(x, 3) for x in weights.tolist()], why=blind_why(fix)))


def blind_query_gets_zero(c, out, attn, expected, b: int = 1, i: int = 2) -> None:
    """Query i of batch item b sees no key: zero weights, no NaN, and an output of W_o's bias (expected:
    reference out). A follow-up for every caller, never a core failure: it raises FollowUp."""
    row_w, row_o = attn[b, :, i], out[b, i]
    where = t("batch {b}, query {i}", b=b, i=i)
    if torch.isnan(row_w).any() or torch.isnan(row_o).any():
        raise blind_verdict(c, where, nan=True)
    if (row_w != 0).any():
        raise blind_verdict(c, t("batch {b}, query {i}, head 0,", b=b, i=i), nan=False, weights=row_w[0])
    others = torch.ones(out.shape[:2], dtype=torch.bool)
    others[b, i] = False
    if torch.allclose(out[others], expected[others], rtol=1e-9, atol=1e-10) and not torch.allclose(
            row_o, expected[b, i], rtol=1e-9, atol=1e-10):
        raise FollowUp(t("{label}: {where} sees no key and its weights are zero, but its output is not W_o's bias: "
                         "compute the output from the zeroed weights (attn @ V), so the attention gives 0. {why}",
                         label=c.label, where=where, why=blind_why()))


# ----------------------------------------------------------------------------- NumPy attention (output, weights)

NAMES = ("output", "attention_weights")


def large_scores_stay_finite(kit, c, args, pair, scaled: str) -> None:
    """Scores of ~1000 (args scaled by 30): no NaN or inf, and still the reference's result.

    pair(value, c) -> (output, attention_weights); scaled says what was scaled ("q and k times 30").
    """
    out, weights = pair(kit.user(args, case=c), c)
    if not (np.isfinite(out).all() and np.isfinite(weights).all()):
        why = t("exp of a score above 709 overflows, and a row whose scores all lie far below the max subtracted "
                "underflows to 0 / 0: subtract each row's own max before np.exp (the numpy/softmax kata)")
        raise Fail(t("{label}, {scaled}: your result has NaN or inf", label=c.label, scaled=t(scaled)),
                   why if args[-1] is None or not _finite(kit, args[:-1] + (None,), c, pair) else None)
    for name, got, want in zip(NAMES, (out, weights), kit.reference(args, case=c)):
        try:
            compare(got, want, name)
        except Fail as fail:
            raise Fail(t("{label}, {scaled}: {fail}", label=c.label, scaled=t(scaled), fail=fail)) from None


def _finite(kit, args, c, pair) -> bool:
    """Whether the user's result on args is finite (False where it raises): the same large scores without the mask
    tell an exp that overflows on any row from NaN that only the hidden positions bring."""
    try:
        return all(np.isfinite(x).all() for x in pair(kit.user(args, case=c), c))
    except (Fail, UserError):
        return False


def float32_kept(kit, cases, scale: str) -> None:
    """float32 inputs give float32 outputs; scale names the size under the root (d_k, depth)."""
    for c in cases:
        got = kit.user(kit.inputs(c, "float32"), case=c, dtype="float32")
        for name, value in zip(NAMES, got if isinstance(got, (tuple, list)) else ()):
            if isinstance(value, np.ndarray) and value.dtype == np.float64:  # values: the float32 numerics check
                raise FollowUp(t("{label}: float32 inputs gave a float64 {name} (a follow-up: memory doubles and every "
                                 "later step slows). np.sqrt({scale}) is a float64 NumPy scalar and, since NumPy 2, it "
                                 "turns float32 arrays into float64: divide by math.sqrt({scale}) (a Python float) or "
                                 "by np.sqrt({scale}).astype(q.dtype); an additive mask such as mask * -1e9 is float64 "
                                 "too: use np.where(mask, scores, -np.inf)", label=c.label, name=name, scale=scale))


def layer_survives_large_scores(kit, c, args, at: tuple, names: str, legend: str) -> None:
    """A NumPy layer given W_q and W_k times 40 (args[at]): scores in the thousands must not overflow.

    Run only when the layer is right on ordinary inputs (else the numerics check has already said
    what is wrong, with its diagnosis). names: the two weights as the kata calls them.
    """
    def same(args) -> bool:
        try:
            compare(kit.user(args), kit.reference(args), "output", tol=kit.tolerance("float64"))
            return True
        except Fail:
            return False

    if not same(args):
        return
    args = tuple(a * 40.0 if i in at else a for i, a in enumerate(args))
    got = kit.user(args)
    if isinstance(got, np.ndarray) and not np.all(np.isfinite(got)):
        raise Fail(t("{label}, {names} scaled by 40: the output holds NaN or inf. exp() of scores in the thousands "
                     "overflows, and a row far below the max subtracted underflows to 0 / 0: softmax must subtract each "
                     "row's own max first (the given softmax does)", label=c.label,
                     names=t(names)))
    try:
        compare(got, kit.reference(args), "output", legend, tol=kit.tolerance("float64"))
    except Fail as fail:
        raise Fail(t("{label}, {names} scaled by 40: {fail}. Right on ordinary inputs but not on large scores: softmax "
                     "must subtract each row's max before exp()", label=c.label, names=t(names), fail=fail)) from None
