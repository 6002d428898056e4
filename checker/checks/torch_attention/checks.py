"""Hidden checks: PyTorch scaled dot-product attention."""

import math

import torch

from checker.checks.shared import attention as shared
from checker.checks.shared import masks
from checker.checks.shared.outputs import split
from checker.kit import (FLOAT32_INSIDE, Fail, Mistake, UserError, at_line, case, check, expect_structure,
                         matches, user_line)
from checker.lang import t

TARGET = "ScaledDotProductAttention"
DROPOUT = "weights"  # the constructor takes dropout: it acts in training only, on the attention weights
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
OUTPUTS = [("output", "(B, H, T_q, d_v)"), ("weights", "(B, H, T_q, T_k)")]
DEVICE = True  # a fill or a mask made inside must follow the inputs' device

# Every dimension its own size, so a swapped or broadcast axis cannot pass by coincidence.
CASES = [
    case(1, B=2, H=3, T_q=5, T_k=7, d_k=4, d_v=6, mask="none"),
    case(2, B=3, H=2, T_q=6, T_k=5, d_k=8, d_v=4, mask="padding (B, 1, 1, T_k)"),
    case(3, B=2, H=4, T_q=6, T_k=6, d_k=3, d_v=5, mask="causal (1, 1, T_q, T_k)"),
    case(4, B=3, H=2, T_q=4, T_k=7, d_k=5, d_v=6, mask="random (B, H, T_q, T_k)"),
]
# A query that may see no key: beyond the textbook answer (the interview tutorial's -inf fill gives NaN there, the
# Annotated Transformer's -1e9 a uniform row), so it is a follow-up, held apart from the core cases.
_BLIND = case(6, B=3, H=2, T_q=4, T_k=7, d_k=5, d_v=6, mask="random (B, H, T_q, T_k), one query sees nothing")
SHOW_WEIGHTS = (2, 1)  # the causal case, the weights output: drawn when masking fails or on --show-weights
TIMING = case(5, B=2, H=4, T_q=64, T_k=48, d_k=16, d_v=24, mask="padding (B, 1, 1, T_k)")


def init(c):
    return {"dropout": 0.0}


def make_mask(c) -> torch.Tensor | None:
    return masks.case_mask(c)  # padding: lengths 1..T_k, batch item 0's T_k - 2


def inputs(c, dtype):
    g = c.generator()
    dt = getattr(torch, dtype)
    Q = torch.randn(c.B, c.H, c.T_q, c.d_k, generator=g, dtype=torch.float64).to(dt)
    K = torch.randn(c.B, c.H, c.T_k, c.d_k, generator=g, dtype=torch.float64).to(dt)
    V = torch.randn(c.B, c.H, c.T_k, c.d_v, generator=g, dtype=torch.float64).to(dt)
    return Q, K, V, make_mask(c)


# ----------------------------------------------------------------------------- named mistakes


def attend(Q, K, V, mask=None, *, scale="sqrt_dk", axis=-1, invert=False, after_softmax=False, fill=float("-inf"),
           scale_weights=False):
    """Attention with knobs; every knob at its default gives the right answer."""
    divisor = {"sqrt_dk": math.sqrt(Q.size(-1)), "none": 1.0, "dk": Q.size(-1), "sqrt_dv": math.sqrt(V.size(-1)),
               "half_dk": Q.size(-1) / 2, "sqrt_tk": math.sqrt(K.size(-2))}[scale]
    scores = Q @ K.transpose(-2, -1) / (1.0 if scale_weights else divisor)
    visible = None if mask is None else (~mask if invert else mask)
    if visible is not None and not after_softmax:
        scores = scores.masked_fill(~visible, fill)
    weights = scores.softmax(dim=axis) / (divisor if scale_weights else 1.0)
    if visible is not None and fill == float("-inf"):
        weights = weights.masked_fill(~visible, 0.0)
    return weights @ V, weights


def _variant(**knobs):
    return lambda Q, K, V, mask=None: attend(Q, K, V, mask, **knobs)


MISTAKES = [
    Mistake("missing scale", _variant(scale="none"),
            "your output equals attention without the 1/√d_k scale: divide the scores Q Kᵀ by √d_k"),
    Mistake("scale d_k / 2", _variant(scale="half_dk"),
            "your scores are divided by d_k / 2: d_k ** 1/2 is (d_k ** 1) / 2 by operator precedence; write "
            "math.sqrt(d_k) or d_k ** 0.5"),
    Mistake("scale by the number of keys", _variant(scale="sqrt_tk"),
            "your scores are divided by √T_k, the number of keys: d_k is the size of the LAST axis of Q or K "
            "(Q.size(-1)), not K.size(-2)"),
    Mistake("scale after softmax", _variant(scale_weights=True),
            "you divide the weights by √d_k after the softmax, so rows no longer sum to 1: scale the scores Q Kᵀ "
            "before the softmax"),
    Mistake("mask inverted", _variant(invert=True),
            "your mask is inverted: True means 'may attend', so hide the positions where mask is False (~mask)"),
    Mistake("hidden scores set to 0", _variant(fill=0.0),
            "your hidden scores are set to 0 (a fill or a product with the mask), and exp(0) = 1 still gives them "
            "weight: fill them with -inf before the softmax, scores.masked_fill(~mask, float('-inf'))"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "ScaledDotProductAttention is an nn.Module with forward(Q, K, V, mask)")
def structure(kit):
    expect_structure(kit, TARGET, module=True, params=["dropout"], forward=["Q", "K", "V", "mask"], init=init(None))


@check("masking", "hidden keys get exactly zero weight")
def hidden_keys_zero(kit):
    for c in CASES[1:]:
        args = kit.inputs(c)
        _, weights = _pair(kit.user(args, case=c), c)
        shared.scores_returned(c, weights, _pair(kit.reference(args, case=c), c)[1], args[3], c.d_k)
        visible = args[3].expand(c.B, c.H, c.T_q, c.T_k)
        leaked = weights.masked_fill(visible, 0.0)
        if torch.isnan(leaked).any() or (leaked != 0).any():
            b, h, i, j = (leaked.isnan() | (leaked != 0)).nonzero()[0].tolist()
            raise Fail(t("{label}: query {i} gives weight {w:.3g} to hidden key {j} (batch {b}, head {h}); fill "
                         "hidden scores with -inf before softmax", label=c.label, i=i, w=leaked[b, h, i, j].item(), j=j,
                         b=b, h=h))


@check("masking", "under a causal mask, position i uses no position after i")
def causal(kit):
    c = CASES[2]
    Q, K, V, mask = kit.inputs(c)
    leak = masks.future_leak(lambda v: _pair(kit.user((Q, K, v, mask), case=c), c)[0], (V,), (10.0,), axis=2)
    if leak:
        raise Fail(t("{label}: changing values after position {pos} changed the output at position ≤ {pos}: the "
                     "future leaks through the causal mask", label=c.label, pos=leak.pos))


@check("masking", "a query with no visible key gets zero weights and a zero output", followup=True)
def fully_hidden_row(kit):
    c = _BLIND
    out, weights = _pair(kit.user(kit.inputs(c), case=c), c)
    _blind_row(c, out[1, 0, 2], weights[1, 0, 2], t("batch 1, head 0, query 2"))


@check("numerics", "float16 inputs with a padding mask: the mask's fill fits the dtype", followup=True)
def half_precision(kit):
    # Half precision is how attention runs on a GPU; the contract does not promise it, so a miss is the question
    # an interviewer asks next, not a failure.
    c = CASES[1]
    Q, K, V, mask = inputs(c, "float64")
    try:
        out, weights = _pair(kit.user((Q.half(), K.half(), V.half(), mask), init=kit.init(c), dtype="float16"), c)
    except UserError as err:
        if "without overflow" not in err.text:
            raise
        raise Fail(t("{label}, in float16: your code raised {error}{where}", label=c.label, error=err,
                     where=at_line(err)), t(_HALF_WHY), line=user_line(err)) from None
    if not (torch.isfinite(out).all() and torch.isfinite(weights).all()):
        raise Fail(t("{label}, in float16: your output holds inf or NaN", label=c.label), t(_HALF_WHY))


@check("masking", "scores near -57000 with a padding mask: hidden keys still get zero weight", followup=True)
def very_negative_scores(kit):
    # GPT-2 fills hidden scores with -1e4: right while the scores stay far above it, wrong once they do not. The
    # contract says hidden keys get zero weight whatever the scores, so a miss is the interviewer's next question.
    c = CASES[1]
    Q, K, V, mask = inputs(c, "float64")
    _, ordinary = _pair(kit.user((Q, K, V, mask), case=c), c)
    if not matches(ordinary, _pair(kit.reference((Q, K, V, mask), case=c), c)[1], FLOAT32_INSIDE):
        return  # wrong on ordinary scores already: the core checks say how, and the fill is not the question
    Q[..., 0], K[..., 0] = 400.0, -400.0  # q·k = -160000 + a few, divided by √d_k: every score near -57000
    _, weights = _pair(kit.user((Q, K, V, mask), case=c), c)
    shared.very_negative_verdict(c, weights, mask)


_HALF_WHY = ("Follow-up: which fill works in every dtype? -1e9 does not fit in float16 (its largest value is 65504), "
             "so masked_fill(~mask, -1e9) raises or becomes -inf; float('-inf'), or torch.finfo(scores.dtype).min, "
             "fits every dtype")


def _blind_row(c, row_o, row_w, where: str) -> None:
    """The follow-up on a query that sees no key: NaN (an unguarded -inf fill) or a uniform row (-1e9)."""
    why = t("Follow-up: what should a query that may see no key return (a row of padding, or a causal mask over a "
            "left-padded batch)? A NaN there spreads to the whole batch through the loss and its gradients; this "
            "kata's reference gives zero weights and a zero output, e.g. weights.masked_fill(~mask, 0.0) after softmax")
    if torch.isnan(row_w).any() or torch.isnan(row_o).any():
        raise Fail(t("{label}: {where} sees no key and came out NaN: softmax over a row that is all -inf (the -inf "
                     "fill of the interview tutorial) is 0/0. {why}", label=c.label, where=where, why=why))
    if (row_w != 0).any() or (row_o != 0).any():
        uniform = torch.allclose(row_w, torch.full_like(row_w, 1 / row_w.numel()))
        how = (t("spread evenly over the hidden keys: a large negative fill such as -1e9 (the Annotated "
                 "Transformer's) was recognised, which turns such a row uniform") if uniform
               else f"{[round(x, 3) for x in row_w.tolist()]}")
        raise Fail(t("{label}: {where} sees no key, yet its weights are {how}. {why}", label=c.label, where=where,
                     how=how, why=why))


def _pair(value, c):
    return split(value, c, ("output", "weights"), weights=((c.B, c.H, c.T_q, c.T_k), "(B, H, T_q, T_k)"))
