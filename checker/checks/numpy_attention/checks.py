"""Hidden checks: NumPy scaled dot-product attention, with any number of leading axes."""

import math

import numpy as np
import torch

from checker.checks.shared import attention as shared
from checker.checks.shared import masks
from checker.checks.shared.outputs import split
from checker.lang import t
from checker.kit import FLOAT32_INSIDE, Fail, Mistake, UserError, case, check, expect_structure, matches
from checker.checks.shared.numpy_parts import softmax

TARGET = "scaled_dot_product_attention"
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
OUTPUTS = [("output", "(..., T_q, d_v)"), ("attention_weights", "(..., T_q, T_k)")]

# Every dimension its own size, so a swapped or broadcast axis cannot pass by coincidence.
# Case 1 is 3-D (no head axis): the NumPy tutorial's k.transpose(0, 1, 3, 2) works only for 4-D arrays.
CASES = [
    case(1, B=2, T_q=5, T_k=7, d_k=4, d_v=6, mask="none"),
    case(2, B=3, H=2, T_q=6, T_k=5, d_k=8, d_v=4, mask="padding (B, 1, 1, T_k)"),
    case(3, B=2, H=4, T_q=6, T_k=6, d_k=3, d_v=5, mask="causal (T_q, T_k)"),
    case(4, B=3, H=2, T_q=4, T_k=7, d_k=5, d_v=6, mask="random (B, H, T_q, T_k)"),
    case(5, B=2, T_q=4, T_k=6, d_k=3, d_v=5, mask="padding (B, 1, T_k)"),
    case(6, T_q=3, T_k=5, d_k=4, d_v=2, mask="random (T_q, T_k)"),
]
# A query that may see no key: beyond the textbook answer (an unguarded -inf gives NaN there, -1e9 a
# uniform row), so it is a follow-up, held apart from the core cases.
_BLIND = case(8, B=3, H=2, T_q=4, T_k=7, d_k=5, d_v=6, mask="random (B, H, T_q, T_k), one query sees nothing")
SHOW_WEIGHTS = (2, 1)  # the causal case, the weights output: drawn when masking fails or on --show-weights
TIMING = case(7, B=2, H=4, T_q=64, T_k=48, d_k=16, d_v=24, mask="padding (B, 1, 1, T_k)")


def _lead(c):
    """The leading axes of a case: (), (B,) or (B, H)."""
    return tuple(c.dims[n] for n in ("B", "H") if n in c.dims)


def make_mask(c):
    # padding: every batch item keeps at least one real key and has at least one PAD (lengths 1..T_k - 1), so
    # even an inverted mask leaves every query something to see (the named mistakes stay comparable)
    return masks.case_mask(c, longest=c.T_k - 1, numpy=True)


def inputs(c, dtype):
    g = c.generator()
    lead = _lead(c)

    def randn(*shape):
        return torch.randn(*lead, *shape, generator=g, dtype=torch.float64).numpy().astype(dtype)

    return randn(c.T_q, c.d_k), randn(c.T_k, c.d_k), randn(c.T_k, c.d_v), make_mask(c)


# ----------------------------------------------------------------------------- named mistakes


def attend(q, k, v, mask=None, *, scale="sqrt_dk", axis=-1, mask_as="visible", after_softmax=False):
    """Attention with knobs; every knob at its default gives the right answer.

    mask_as: "visible" (right), "hidden" (inverted: the NumPy tutorial's convention, 1 = hidden),
             "plus_1e9" (additive mask with the wrong sign: +1e9 on hidden keys, no fix),
             "zero" (hidden scores set to 0: np.where(mask, scores, 0.0) or scores * mask, no fix).
    """
    divisor = {"sqrt_dk": math.sqrt(q.shape[-1]), "none": 1.0, "dk": q.shape[-1], "sqrt_dv": math.sqrt(v.shape[-1]),
               "half_dk": q.shape[-1] / 2, "sqrt_tk": math.sqrt(k.shape[-2])}[scale]
    scores = q @ np.swapaxes(k, -1, -2) / divisor
    if mask is None:
        weights = softmax(scores, axis)
        return weights @ v, weights
    if mask_as == "plus_1e9":
        weights = softmax(scores + np.where(mask, 0.0, 1e9).astype(scores.dtype), axis)
        return weights @ v, weights
    if mask_as == "zero":
        weights = softmax(np.where(mask, scores, 0.0), axis)
        return weights @ v, weights
    if mask_as == "hidden_1e9":  # inverted, in the NumPy tutorial's additive form: a row with no key left comes out uniform
        weights = softmax(scores + np.where(mask, -1e9, 0.0).astype(scores.dtype), axis)
        return weights @ v, weights
    visible = mask if mask_as == "visible" else ~mask
    if not after_softmax:
        scores = np.where(visible, scores, -np.inf)
    weights = np.where(visible, softmax(scores, axis), 0.0)
    return weights @ v, weights


def _variant(**knobs):
    return lambda q, k, v, mask=None: attend(q, k, v, mask, **knobs)


MISTAKES = [
    Mistake("missing scale", _variant(scale="none"),
            "your output equals attention without the 1/√d_k scale: divide the scores q kᵀ by math.sqrt(d_k)"),
    Mistake("scale d_k / 2", _variant(scale="half_dk"),
            "your scores are divided by d_k / 2: d_k ** 1/2 is (d_k ** 1) / 2 by operator precedence; write "
            "math.sqrt(d_k) or d_k ** 0.5"),
    Mistake("scale by the number of keys", _variant(scale="sqrt_tk"),
            "your scores are divided by √T_k, the number of keys: d_k is the size of the LAST axis of q or k "
            "(q.shape[-1]), not k.shape[-2]"),
    Mistake("mask inverted", _variant(mask_as="hidden"),
            "your mask is inverted: here True means 'may attend' (the NumPy tutorial uses 1 = hidden and adds mask * -1e9); "
            "hide the keys where mask is False: np.where(mask, scores, -np.inf)"),
    Mistake("mask inverted, -1e9 added", _variant(mask_as="hidden_1e9"),
            "your mask is inverted: here True means 'may attend' (the NumPy tutorial uses 1 = hidden and adds mask * -1e9); "
            "hide the keys where mask is False: np.where(mask, scores, -np.inf)"),
    Mistake("additive mask, wrong sign", _variant(mask_as="plus_1e9"),
            "your hidden keys take all the weight: you add +1e9 to the hidden scores; add a large NEGATIVE "
            "number there, or better np.where(mask, scores, -np.inf)"),
    Mistake("mask after softmax", _variant(after_softmax=True),
            "you zero the hidden weights after softmax, so rows no longer sum to 1: mask the scores before softmax"),
    Mistake("hidden scores set to 0", _variant(mask_as="zero"),
            "your hidden scores are set to 0 (np.where(mask, scores, 0) or scores * mask), and exp(0) = 1 still gives "
            "them weight: give them -np.inf before the softmax, np.where(mask, scores, -np.inf)"),
]

# ----------------------------------------------------------------------------- checks


@check("structure", "scaled_dot_product_attention is a function (q, k, v, mask)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["q", "k", "v", "mask"])


@check("shapes", "works with any number of leading axes: 2-D, 3-D and 4-D inputs")
def any_rank(kit):
    for c in (CASES[5], CASES[0], CASES[1]):
        rank = 2 + len(_lead(c))
        try:
            kit.user(kit.inputs(c), case=c)
        except UserError as err:
            if err.not_implemented:
                raise
            raise Fail(t("{label}, {rank}-D inputs: your code raised {err}. q, k and v may have any number of leading "
                         "axes: transpose only the last two axes of k, np.swapaxes(k, -1, -2) (k.transpose(0, 1, 3, 2) "
                         "needs exactly 4 axes, k.T reverses all of them) and multiply with @ (np.matmul), which "
                         "batches over the leading axes (np.dot does not)", label=c.label, rank=rank, err=err)) from None


@check("masking", "hidden keys get exactly zero weight")
def hidden_keys_zero(kit):
    for c in CASES:
        args = kit.inputs(c)
        if args[3] is None:
            continue
        _, weights = _pair(kit.user(args, case=c), c)
        shared.scores_returned(c, weights, _pair(kit.reference(args, case=c), c)[1], args[3], c.d_k, qk="q kᵀ",
                               numpy=True)
        visible = np.broadcast_to(args[3], weights.shape)
        leaked = np.where(visible, 0.0, weights)
        if np.isnan(leaked).any() or (leaked != 0).any():
            where = tuple(int(i) for i in np.argwhere(np.isnan(leaked) | (leaked != 0))[0])
            raise Fail(t("{label}: weight {w:.3g} at index {where}, a hidden key: give hidden scores -np.inf before "
                         "softmax (np.where(mask, scores, -np.inf)), True = may attend", label=c.label,
                         w=leaked[where], where=where))


@check("masking", "under a causal mask, position i uses no position after i")
def causal(kit):
    c = CASES[2]
    q, k, v, mask = kit.inputs(c)
    leak = masks.future_leak(lambda v: _pair(kit.user((q, k, v, mask), case=c), c)[0], (v,), (10.0,), axis=-2)
    if leak:
        raise Fail(t("{label}: changing values after position {pos} changed the output at position ≤ {pos}: the "
                     "future leaks through the causal mask", label=c.label, pos=leak.pos))


@check("masking", "a query with no visible key gets zero weights and a zero output", followup=True)
def fully_hidden_row(kit):
    c = _BLIND
    with np.errstate(all="ignore"):
        out, weights = _pair(kit.user(kit.inputs(c), case=c), c)
    row_w, row_o = weights[1, 0, 2], out[1, 0, 2]
    where = t("batch 1, head 0, query 2")
    if np.isnan(row_w).any() or np.isnan(row_o).any():
        raise shared.blind_verdict(c, where, nan=True, fix=shared.NUMPY_FIX)
    if (row_w != 0).any() or (row_o != 0).any():
        raise shared.blind_verdict(c, where, nan=False, weights=row_w, fix=shared.NUMPY_FIX)


@check("masking", "scores near -57000 with a padding mask: hidden keys still get zero weight", followup=True)
def very_negative_scores(kit):
    # GPT-2 fills hidden scores with -1e4: right while the scores stay far above it, wrong once they do not. The
    # contract says hidden keys get zero weight whatever the scores, so a miss is the interviewer's next question.
    c = CASES[1]
    q, k, v, mask = kit.inputs(c)
    with np.errstate(all="ignore"):
        _, ordinary = _pair(kit.user((q, k, v, mask), case=c), c)
    if not matches(ordinary, _pair(kit.reference((q, k, v, mask), case=c), c)[1], FLOAT32_INSIDE):
        return  # wrong on ordinary scores already: the core checks say how, and the fill is not the question
    a = math.sqrt(57000.0 * math.sqrt(c.d_k))
    q, k = q.copy(), k.copy()
    q[..., 0], k[..., 0] = a, -a  # q·k = -a² + a few, divided by √d_k: every score near -57000
    with np.errstate(all="ignore"):
        _, weights = _pair(kit.user((q, k, v, mask), case=c), c)
    shared.very_negative_verdict(c, weights, mask, numpy=True)


@check("numerics", "large scores (q and k of size 30) give no NaN or inf: softmax subtracts each row's max")
def large_scores(kit):
    # scores of size ~1000: exp() overflows above 709 in float64 unless each row's max is subtracted
    c = CASES[1]
    q, k, v, mask = kit.inputs(c)
    shared.large_scores_stay_finite(kit, c, (q * 30.0, k * 30.0, v, mask), _pair, "q and k times 30")


@check("numerics", "float32 stays float32 through the scale and the mask")
def keeps_float32(kit):
    shared.float32_kept(kit, CASES[1:2] + CASES[0:1], "d_k")


def _pair(value, c):
    return split(value, c, shared.NAMES, np.ndarray, attention_weights=((*_lead(c), c.T_q, c.T_k), "(..., T_q, T_k)"))
