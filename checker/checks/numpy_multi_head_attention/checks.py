"""Hidden checks: NumPy multi-head attention with explicit weights (the NumPy tutorial's functions)."""

import math

import numpy as np
import torch

from checker.checks.shared import attention as shared
from checker.checks.shared import masks
from checker.checks.shared.outputs import split
from checker.lang import t
from checker.kit import FLOAT32_INSIDE, Fail, Mistake, case, check, compare, expect_structure, matches
from checker.checks.shared.numpy_parts import softmax

TARGET = "multi_head_attention"
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
OUTPUTS = [("output", "(B, T_q, d_model)"), ("attention_weights", "(B, H, T_q, T_k)")]
# The given functions: when the numbers differ, the first call whose input differs is named.
PARTS = ("split_heads", "scaled_dot_product_attention", "combine_heads")
LOOPED_PARTS = ("scaled_dot_product_attention",)  # a loop over the heads calls it H times

# Every dimension its own size (depth = d_model // H included), so a swapped axis cannot pass by
# coincidence. Cases 1 and 3 are self-attention (q is k is v), 2 and 4 cross-attention (T_q != T_k).
CASES = [
    case(1, B=2, T=5, d_model=12, H=3, depth=4, attention="self", mask="none"),
    case(2, B=3, T_q=4, T_k=6, d_model=10, H=2, depth=5, attention="cross", mask="padding (B, 1, 1, T_k)"),
    case(3, B=2, T=7, d_model=24, H=4, depth=6, attention="self", mask="causal (T, T)"),
    case(4, B=4, T_q=3, T_k=5, d_model=12, H=6, depth=2, attention="cross", mask="random (B, H, T_q, T_k)"),
]
# A query that may see no key: beyond the textbook answer (an unguarded -inf gives NaN there, -1e9 a
# uniform row), so it is a follow-up, held apart from the core cases.
_BLIND = case(6, B=4, T_q=3, T_k=5, d_model=12, H=6, depth=2, attention="cross",
              mask="random (B, H, T_q, T_k), one query sees nothing")
SHOW_WEIGHTS = (2, 1)  # the causal case, the weights output: drawn when masking fails or on --show-weights
TIMING = case(5, B=2, T_q=64, T_k=48, d_model=64, H=4, depth=16, attention="cross", mask="padding (B, 1, 1, T_k)")


def _lengths(c):
    return (c.T, c.T) if "T" in c.dims else (c.T_q, c.T_k)


def make_mask(c):
    # padding: every item keeps at least one real key and one PAD (lengths 1..T_k - 1): even an inverted mask
    # leaves every query something to see, so the named mistakes stay comparable
    return masks.case_mask(c, longest=_lengths(c)[1] - 1, numpy=True)


def inputs(c, dtype):
    """(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo); weights ~ randn / sqrt(d_model), as x @ W."""
    g = c.generator()
    T_q, T_k = _lengths(c)

    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale).numpy().astype(dtype)

    q = randn(c.B, T_q, c.d_model)
    k, v = (q, q) if c.attention == "self" else (randn(c.B, T_k, c.d_model), randn(c.B, T_k, c.d_model))
    Wq, Wk, Wv, Wo = (randn(c.d_model, c.d_model, scale=c.d_model ** -0.5) for _ in range(4))
    return q, k, v, make_mask(c), c.d_model, c.H, Wq, Wk, Wv, Wo


# ----------------------------------------------------------------------------- named mistakes


def _split(x, num_heads, depth, how="right"):
    B, T, _ = x.shape
    if how == "reshape":  # straight to (B, H, T, depth): positions and heads get mixed
        return x.reshape(B, num_heads, T, depth)
    return x.reshape(B, T, num_heads, depth).transpose(0, 2, 1, 3)


def _combine(x, how="right"):
    B, H, T, depth = x.shape
    if how == "reshape":  # straight to (B, T, d_model): heads and positions get mixed
        return x.reshape(B, T, H * depth)
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * depth)


def mha(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo, *, split="right", combine="right", swap_args=False,
        w_t=False, use_wo=True, scale="depth", mask_as="visible", axis=-1):
    """Multi-head attention with knobs; every knob at its default gives the right answer."""
    depth = d_model // num_heads
    heads, size = (depth, num_heads) if swap_args else (num_heads, depth)
    proj = (lambda x, W: x @ W.T) if w_t else (lambda x, W: x @ W)
    Q, K, V = (_split(proj(x, W), heads, size, split) for x, W in ((q, Wq), (k, Wk), (v, Wv)))
    divisor = {"depth": math.sqrt(Q.shape[-1]), "none": 1.0, "d_model": math.sqrt(d_model)}[scale]
    scores = Q @ np.swapaxes(K, -1, -2) / divisor
    visible = None if mask is None else (mask if mask_as == "visible" else ~mask)
    if visible is not None and mask_as == "hidden_1e9":  # the NumPy tutorial's additive -1e9: a hidden row comes out uniform
        weights = softmax(scores + np.where(visible, 0.0, -1e9), axis)
    elif visible is not None:
        weights = np.where(visible, softmax(np.where(visible, scores, -np.inf), axis), 0.0)
    else:
        weights = softmax(scores, axis)
    out = _combine(weights @ V, combine)
    return (proj(out, Wo) if use_wo else out), weights


def _variant(**knobs):
    return lambda *args: mha(*args, **knobs)


_SPLIT_FIX = ("reshape to (B, T, num_heads, depth) first (each position's features cut into heads), "
             "then transpose(0, 2, 1, 3) to (B, num_heads, T, depth)")
_COMBINE_FIX = ("transpose(0, 2, 1, 3) back to (B, T, H, depth) first, then reshape to (B, T, H * depth)")

MISTAKES = [
    Mistake("split without transpose", _variant(split="reshape"),
            f"your output equals multi-head attention whose split_heads reshapes straight to (B, H, T, depth), "
            f"which mixes positions into heads: {_SPLIT_FIX}"),
    Mistake("split and combine without transpose", _variant(split="reshape", combine="reshape"),
            "your output equals multi-head attention whose split_heads and combine_heads both reshape without "
            f"transposing (they undo each other, so a round trip hides it): split: {_SPLIT_FIX}; combine: {_COMBINE_FIX}"),
    Mistake("missing Wo", _variant(use_wo=False),
            "your output equals the concatenated heads without the output projection: finish with combine_heads(...) @ Wo"),
    Mistake("x @ W.T", _variant(w_t=True),
            "your output equals multi-head attention with x @ W.T: here, as in the NumPy tutorial, the weights are applied "
            "as x @ W (the paper walkthrough and nn.Linear use x @ W.T)"),
    Mistake("missing scale", _variant(scale="none"),
            "your output equals multi-head attention without the 1/√depth scale: divide each head's scores by "
            "math.sqrt(depth)"),
    Mistake("scale by d_model", _variant(scale="d_model"),
            "your output equals multi-head attention scaled by 1/√d_model: inside a head the scale is 1/√depth, "
            "depth = d_model // num_heads (the size of one head's query)"),
    Mistake("heads and depth swapped", _variant(swap_args=True),
            "your output equals multi-head attention split into `depth` heads of size num_heads: call "
            "split_heads(x, num_heads, depth), which reshapes to (B, T, num_heads, depth)"),
    Mistake("mask inverted", _variant(mask_as="hidden"),
            "your mask is inverted: here True means 'may attend' (the NumPy tutorial uses 1 = hidden and adds mask * -1e9); "
            "hide the keys where mask is False: np.where(mask, scores, -np.inf)"),
    Mistake("mask inverted, -1e9 added", _variant(mask_as="hidden_1e9"),
            "your mask is inverted: here True means 'may attend' (the NumPy tutorial uses 1 = hidden and adds mask * -1e9); "
            "hide the keys where mask is False: np.where(mask, scores, -np.inf)"),
]

_SPLIT_MISTAKES = [Mistake("split without transpose", lambda x, H, depth: _split(x, H, depth, "reshape"),
                          f"split_heads reshapes straight to (B, H, T, depth), which mixes positions into heads: {_SPLIT_FIX}")]
_COMBINE_MISTAKES = [Mistake("combine without transpose", lambda x: _combine(x, "reshape"),
                            f"combine_heads reshapes (B, H, T, depth) straight to (B, T, d_model), which mixes heads "
                            f"into positions: {_COMBINE_FIX}")]

# ----------------------------------------------------------------------------- checks


@check("structure", "split_heads, combine_heads and multi_head_attention take the NumPy tutorial's arguments")
def structure(kit):
    expect_structure(kit, "split_heads", module=False, params=["x", "num_heads", "depth"])
    expect_structure(kit, "combine_heads", module=False, params=["x"])
    expect_structure(kit, TARGET, module=False,
                     params=["q", "k", "v", "mask", "d_model", "num_heads", "Wq", "Wk", "Wv", "Wo"])


def _one(kit, target, args, mistakes, label, legend):
    got = kit.user(args, target=target)
    expected = kit.reference(args, target=target)
    try:
        compare(got, expected, t("{target} output", target=target), legend)
    except Fail as fail:
        found = kit.name_mistake(args, got, mistakes, run=lambda m: m.impl(*args)) if isinstance(got, np.ndarray) else None
        raise Fail(t("{label}: {fail}", label=label, fail=fail.message), found or fail.diagnosis) from None


@check("shapes", "split_heads turns (B, T, d_model) into (B, H, T, depth), head h holding features h*depth..")
def split_heads_alone(kit):
    g = torch.Generator().manual_seed(21)
    for B, T, H, depth in ((2, 5, 3, 4), (3, 4, 2, 5)):
        x = torch.randn(B, T, H * depth, generator=g, dtype=torch.float64).numpy()
        _one(kit, "split_heads", (x, H, depth), _SPLIT_MISTAKES,
             f"split_heads(x {x.shape}, num_heads={H}, depth={depth})", "(B, H, T, depth)")


@check("shapes", "combine_heads turns (B, H, T, depth) back into (B, T, H * depth)")
def combine_heads_alone(kit):
    g = torch.Generator().manual_seed(22)
    for B, H, T, depth in ((2, 3, 5, 4), (3, 2, 4, 5)):
        x = torch.randn(B, H, T, depth, generator=g, dtype=torch.float64).numpy()
        _one(kit, "combine_heads", (x,), _COMBINE_MISTAKES, f"combine_heads(x {x.shape})", "(B, T, H * depth)")


@check("masking", "hidden keys get exactly zero weight in every head")
def hidden_keys_zero(kit):
    for c in CASES[1:]:
        args = kit.inputs(c)
        _, weights = _pair(kit.user(args, case=c), c)
        shared.scores_returned(c, weights, _pair(kit.reference(args, case=c), c)[1], args[3], c.depth,
                               size="depth", numpy=True)
        leaked = np.where(np.broadcast_to(args[3], weights.shape), 0.0, weights)
        if np.isnan(leaked).any() or (leaked != 0).any():
            where = tuple(int(i) for i in np.argwhere(np.isnan(leaked) | (leaked != 0))[0])
            raise Fail(t("{label}: weight {w:.3g} at index {where}, a hidden key: give hidden scores -np.inf before "
                         "softmax (np.where(mask, scores, -np.inf)), True = may attend", label=c.label,
                         w=leaked[where], where=where))


@check("masking", "under a causal mask, position i uses no position after i")
def causal(kit):
    c = CASES[2]
    args = kit.inputs(c)
    # self-attention: q, k and v are one array, changed alike
    leak = masks.future_leak(lambda x: _pair(kit.user((x, x, x, *args[3:]), case=c), c)[0], args[:1], (1.0,),
                             same=masks.close(1e-12, 1e-12))
    if leak:
        raise Fail(t("{label}: changing the input after position {pos} changed the output at position ≤ {pos}: the "
                     "future leaks through the causal mask", label=c.label, pos=leak.pos))


@check("masking", "a query with no visible key gets zero weights and a zero output", followup=True)
def fully_hidden_row(kit):
    c = _BLIND
    args = kit.inputs(c)
    with np.errstate(all="ignore"):
        out, weights = _pair(kit.user(args, case=c), c)
    row_w = weights[1, 0, 2]
    where = t("batch 1, head 0, query 2")
    if np.isnan(row_w).any() or np.isnan(out).any():
        raise shared.blind_verdict(c, where, nan=True, fix=shared.NUMPY_FIX)
    if (row_w != 0).any():
        raise shared.blind_verdict(c, where, nan=False, weights=row_w, fix=shared.NUMPY_FIX)


@check("masking", "scores near -57000 with a padding mask: hidden keys still get zero weight in every head",
       followup=True)
def very_negative_scores(kit):
    # GPT-2 fills hidden scores with -1e4: right while the scores stay far above it, wrong once they do not. The
    # contract says hidden keys get zero weight whatever the scores, so a miss is the interviewer's next question.
    c = CASES[1]
    args = kit.inputs(c)
    with np.errstate(all="ignore"):
        _, ordinary = _pair(kit.user(args, case=c), c)
    if not matches(ordinary, _pair(kit.reference(args, case=c), c)[1], FLOAT32_INSIDE):
        return  # wrong on ordinary scores already: the core checks say how, and the fill is not the question
    with np.errstate(all="ignore"):
        _, weights = _pair(kit.user(_scores_near_minus_57000(args, c), case=c), c)
    shared.very_negative_verdict(c, weights, args[3], numpy=True)


def _scores_near_minus_57000(args, c):
    """Feature 0 of q and k set to 1, and column 0 of every head in Wq (Wk) reading only it, times a (-a): every head's
    query has a in its first place and every key -a, so every score is (-a² + a few) / √depth, near -57000."""
    q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo = (a.copy() if isinstance(a, np.ndarray) else a for a in args)
    a = math.sqrt(57000.0 * math.sqrt(c.depth))
    cols = np.arange(num_heads) * c.depth
    for x, W, value in ((q, Wq, a), (k, Wk, -a)):
        x[..., 0] = 1.0
        W[:, cols] = 0.0
        W[0, cols] = value
    return q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo


@check("numerics", "large scores (Wq and Wk times 30) give no NaN or inf: softmax subtracts each row's max")
def large_scores(kit):
    # scores of size ~1000: exp() overflows above 709 in float64 unless each row's max is subtracted
    c = CASES[1]
    q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo = kit.inputs(c)
    args = (q, k, v, mask, d_model, num_heads, Wq * 30.0, Wk * 30.0, Wv, Wo)
    shared.large_scores_stay_finite(kit, c, args, _pair, "Wq and Wk times 30")


@check("numerics", "float32 stays float32 through the projections, the scale and the mask")
def keeps_float32(kit):
    shared.float32_kept(kit, CASES[1:2] + CASES[0:1], "depth")


def _pair(value, c):
    return split(value, c, shared.NAMES, np.ndarray,
                 attention_weights=((c.B, c.H, *_lengths(c)), "(B, H, T_q, T_k)"))
