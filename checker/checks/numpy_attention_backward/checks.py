"""Hidden checks: the backward pass of scaled dot-product attention in NumPy (dq, dk, dv)."""

import math
import re

import numpy as np
import torch
import torch.nn.functional as F

from checker.checks.shared import masks
from checker.checks.shared.outputs import split
from checker.lang import t
from checker.kit import Fail, FollowUp, Mistake, UserError, case, check, compare, crash_diagnosis, expect_structure
from checker.checks.shared.numpy_parts import softmax

_TRACK = "numpy"
TARGET = "attention_backward"
BATCH_INDEPENDENT = True  # no batch item's gradients depend on another item
OUTPUTS = [("dq", "(..., T_q, d_k)"), ("dk", "(..., T_k, d_k)"), ("dv", "(..., T_k, d_v)")]

# Every dimension its own size (T_q ≠ T_k, d_k ≠ d_v), so a missing transpose cannot pass by
# coincidence, except case 1: causal self-attention has T_q = T_k, the square case in which
# dk = dS q (no transpose) runs and can be named. Ranks 2, 3 and 4.
CASES = [
    case(1, B=2, H=4, T_q=6, T_k=6, d_k=3, d_v=5, mask="causal (T_q, T_k)"),
    case(2, B=2, T_q=5, T_k=7, d_k=4, d_v=6, mask="none"),
    case(3, B=3, H=2, T_q=6, T_k=5, d_k=8, d_v=4, mask="padding (B, 1, 1, T_k)"),
    case(4, B=3, H=2, T_q=4, T_k=7, d_k=5, d_v=6, mask="random (B, H, T_q, T_k)"),
    case(5, T_q=3, T_k=5, d_k=4, d_v=2, mask="random (T_q, T_k)"),
]
TIMING = case(6, B=2, H=4, T_q=64, T_k=48, d_k=16, d_v=24, mask="padding (B, 1, 1, T_k)")
_CAUSAL, _PADDING = CASES[0], CASES[2]
# A query that may see no key: beyond the textbook answer (-inf gives NaN there, -1e9 a uniform row),
# so a follow-up, held apart from the core cases as in the attention kata.
_BLIND = case(7, B=3, H=2, T_q=4, T_k=7, d_k=5, d_v=6, mask="random (B, H, T_q, T_k), one query sees nothing")
_BLIND_QUERY = (1, 0, 2)  # batch 1, head 0, query 2 of case 4 sees no key


def _lead(c):
    """The leading axes of a case: (), (B,) or (B, H)."""
    return tuple(c.dims[n] for n in ("B", "H") if n in c.dims)


def make_mask(c):
    # padding: every batch item keeps at least one real key and has at least one PAD key (lengths 1..T_k - 1)
    return masks.case_mask(c, longest=c.T_k - 1, blind=_BLIND_QUERY, numpy=True)


def inputs(c, dtype):
    g = c.generator()
    lead = _lead(c)

    def randn(*shape):
        return torch.randn(*lead, *shape, generator=g, dtype=torch.float64).numpy().astype(dtype)

    q, k, v = randn(c.T_q, c.d_k), randn(c.T_k, c.d_k), randn(c.T_k, c.d_v)
    return randn(c.T_q, c.d_v), q, k, v, make_mask(c)


def autograd(dout, q, k, v, mask=None):
    """(dq, dk, dv) from torch autograd through F.scaled_dot_product_attention: an independent answer.

    Its bool attn_mask means True = may attend, and a query with no visible key gives a zero output
    and zero gradients (checked with torch 2.13).
    """
    tq, tk, tv = (torch.from_numpy(np.array(a)).requires_grad_(True) for a in (q, k, v))
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=None if mask is None else torch.from_numpy(mask))
    (out * torch.from_numpy(np.array(dout))).sum().backward()
    return tuple(t.grad.numpy() for t in (tq, tk, tv))


# ----------------------------------------------------------------------------- named mistakes


def backward(dout, q, k, v, mask=None, *, forward_scale=True, grad_scale=1, jacobian="full", sum_axis=-1,
             dk_transposed=True, dv_transposed=True, mask_as="visible", empty_rows="zero", upcast=False,
             unscaled=""):
    """Attention backward with knobs; every knob at its default gives the right answer."""
    if upcast:
        dout, q, k, v = (a.astype(np.float64) for a in (dout, q, k, v))
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = q @ np.swapaxes(k, -1, -2) * (scale if forward_scale else 1.0)
    visible = None if mask is None or mask_as == "ignored" else (mask if mask_as == "visible" else ~mask)
    if visible is not None:
        scores = np.where(visible, scores, -np.inf if empty_rows == "zero" else -1e9)
    P = softmax(scores)
    if visible is not None and empty_rows == "zero":
        P = np.where(visible, P, 0.0)
    dv = (np.swapaxes(P, -1, -2) if dv_transposed else P) @ dout
    dP = dout @ np.swapaxes(v, -1, -2)
    dS = {"diagonal": lambda: P * (1 - P) * dP, "exp": lambda: P * dP,
          "unweighted": lambda: P * (dP - np.sum(dP, axis=sum_axis, keepdims=True)),
          "full": lambda: P * (dP - np.sum(dP * P, axis=sum_axis, keepdims=True))}[jacobian]()
    s = (scale if forward_scale else 1.0) * scale ** (grad_scale - 1) if grad_scale else 1.0
    dq = dS @ k * (1.0 if unscaled == "dq" else s)
    dk = (np.swapaxes(dS, -1, -2) if dk_transposed else dS) @ q * (1.0 if unscaled == "dk" else s)
    return dq, dk, dv


def _variant(**knobs):
    return lambda dout, q, k, v, mask=None: backward(dout, q, k, v, mask, **knobs)


_BACKWARD = "dS = P · (dP − rowsum(dP · P)), dq = dS k / √d_k, dk = dSᵀ q / √d_k"

MISTAKES = [
    Mistake("scale applied twice in dq and dk", _variant(grad_scale=2),
            "your dq and dk are divided by d_k: the 1/√d_k enters once, dq = dS k / √d_k, dk = dSᵀ q / √d_k"),
    Mistake("diagonal-only softmax Jacobian", _variant(jacobian="diagonal"),
            "your dS equals P · (1 − P) · dP, the diagonal of softmax's Jacobian only: each weight depends on EVERY "
            f"score of its row (∂P_j/∂S_i = P_j(δ_ij − P_i)), so {_BACKWARD}"),
    Mistake("dk from dS instead of dSᵀ", _variant(dk_transposed=False),
            "your dk equals dS q: S = q kᵀ, so dk = dSᵀ q / √d_k (np.swapaxes(dS, -1, -2) @ q); it only ran because "
            "T_q = T_k here"),
    Mistake("dv from P instead of Pᵀ", _variant(dv_transposed=False),
            "your dv equals P dout: out = P v, so dv = Pᵀ dout (np.swapaxes(P, -1, -2) @ dout); it only ran because "
            "T_q = T_k here"),
    Mistake("mask ignored", _variant(mask_as="ignored"),
            "your gradients ignore the mask: hidden keys leak gradient. Recompute P with the mask "
            "(np.where(mask, scores, -np.inf) before softmax), exactly as the forward pass did"),
    Mistake("blind query with uniform weights", _variant(empty_rows="uniform"),
            "a query with no visible key gets uniform weights from your −1e9 mask, so it passes gradient to every "
            "key and gets a nonzero dq: its output is zero and must give dq = 0 and nothing to dk and dv; zero its "
            "weights after softmax, P = np.where(mask, P, 0.0)"),
    Mistake("float64 out for float32 in", _variant(upcast=True),
            "your values are right but float32 inputs give float64 gradients: divide by math.sqrt(d_k) (a Python "
            "float), not np.sqrt(d_k), and no .astype(np.float64)"),
]




def _triple(value, c):
    value = split(value, c, tuple(name for name, _ in OUTPUTS), np.ndarray)
    dout, q, k, v, _ = inputs(c, "float64")
    for (name, legend), got, like in zip(OUTPUTS, value, (q, k, v)):
        if got.shape != like.shape:
            raise Fail(t("{label}: {name} should have the shape of {of}, {legend} = {want}, got {got}", label=c.label,
                         name=name, of=name[1], legend=legend, want=like.shape, got=got.shape))
    return value


def _compare_all(kit, args, got, expected, label, tol=None):
    try:
        for (name, legend), u, e in zip(OUTPUTS, got, expected):
            compare(u, e, name, legend, tol=tol)
    except Fail as fail:
        found = kit.name_mistake(args, got)
        raise Fail(t("{label}: {fail}", label=label, fail=fail.message), found or fail.diagnosis) from None


_TRANSPOSES = ("with T_q ≠ T_k and d_k ≠ d_v every transpose must be right: dv = Pᵀ dout (..., T_k, d_v), "
              "dP = dout vᵀ (..., T_q, T_k), dq = dS k, dk = dSᵀ q; transpose only the last two axes, "
              "np.swapaxes(a, -1, -2) (a.T reverses every axis), and multiply with @ (np.dot does not batch)")

_FLOAT32_HINT = ("np.sqrt(d_k) is a float64 NumPy scalar and, since NumPy 2, it turns float32 arrays into float64: "
                "divide by math.sqrt(d_k) (a Python float); an additive mask such as mask * -1e9 is float64 too: "
                "use np.where(mask, scores, -np.inf)")


# ----------------------------------------------------------------------------- checks


@check("structure", "attention_backward is a function (dout, q, k, v, mask)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["dout", "q", "k", "v", "mask"])


@check("shapes", "dq, dk and dv have the shapes of q, k and v, for 2-D, 3-D and 4-D inputs with T_q ≠ T_k, d_k ≠ d_v")
def any_rank(kit):
    for c in (CASES[4], CASES[1], CASES[2]):
        rank = 2 + len(_lead(c))
        try:
            _triple(kit.user(kit.inputs(c), case=c), c)
        except UserError as err:
            if err.not_implemented:
                raise
            product = re.search(r"matmul|not aligned|cannot be multiplied", err.text)  # the user's error
            raise Fail(t("{label}, {rank}-D inputs: your code raised {err}", label=c.label, rank=rank, err=err),
                       t(_TRANSPOSES) if product else crash_diagnosis(err) or t(_TRANSPOSES)) from None
        except Fail as fail:
            raise Fail(fail.message, fail.diagnosis or t(_TRANSPOSES)) from None


@check("masking", "a key hidden from every query gets exactly zero dk and dv")
def hidden_keys(kit):
    c = _PADDING
    args = kit.inputs(c)
    dq, dk, dv = _triple(kit.user(args, case=c), c)
    hidden = ~args[4][:, 0, 0, :]  # (B, T_k): PAD keys, hidden from every query of their batch item
    for name, grad in (("dk", dk), ("dv", dv)):
        leaked = np.where(hidden[:, None, :, None], grad, 0.0)
        if np.isnan(leaked).any() or (leaked != 0).any():
            where = tuple(int(i) for i in np.argwhere(np.isnan(leaked) | (leaked != 0))[0])
            found = kit.name_mistake(args, (dq, dk, dv))
            raise Fail(t("{label}: {name}{where} = {value:.3g}, but key {key} of batch item {item} is padding, hidden "
                         "from every query: it has zero weight, so it gets no gradient. Recompute P with the mask, "
                         "hidden keys at -np.inf (or P = np.where(mask, P, 0.0))", label=c.label, name=name,
                         where=list(where), value=leaked[where], key=where[2], item=where[0]), found)


@check("masking", "under a causal mask, dq of query i does not depend on the keys and values after i")
def causal(kit):
    c = _CAUSAL
    dout, q, k, v, mask = kit.inputs(c)
    leak = masks.future_leak(lambda k, v: _triple(kit.user((dout, q, k, v, mask), case=c), c)[0], (k, v),
                             (3.0, -5.0), axis=-2)
    if leak:
        raise Fail(t("{label}: changing the keys and values after position {pos} changed dq at a position ≤ {pos}: "
                     "the future leaks through the causal mask; recompute P with the mask", label=c.label,
                     pos=leak.pos))


_BLIND_WHY = ("Follow-up: what should a query that may see no key give (a row of padding, a causal mask over a "
              "left-padded batch)? Softmax over a row of -inf is NaN, which spreads to every weight through the "
              "gradients; -1e9 gives a uniform row, which passes gradient to keys the query may not see. This kata's "
              "reference zeroes the row's weights after softmax, P = np.where(mask, P, 0.0): its output is 0, so "
              "its dq is 0 and it adds nothing to dk and dv")


@check("masking", "a query with no visible key gets dq = 0, no NaN, and adds nothing to dk and dv", followup=True)
def blind_query(kit):
    c = _BLIND
    args = kit.inputs(c)
    dq, dk, dv = _triple(kit.user(args, case=c), c)
    b, h, i = _BLIND_QUERY
    where = dict(label=c.label, b=b, h=h, i=i)
    if not all(np.isfinite(g).all() for g in (dq, dk, dv)):
        raise Fail(t("{label}: batch {b}, head {h}, query {i} sees no key, and your gradients contain NaN (softmax of a "
                     "row of -inf is NaN). {why}", **where, why=t(_BLIND_WHY)))
    if (dq[b, h, i] != 0).any():
        raise Fail(t("{label}: batch {b}, head {h}, query {i} sees no key; its dq is {dq}, not 0. {why}", **where,
                     dq=[round(float(x), 3) for x in dq[b, h, i]], why=t(_BLIND_WHY)))
    dout = args[0].copy()
    dout[b, h, i] += 7.0
    _, dk2, dv2 = _triple(kit.user((dout,) + args[1:], case=c), c)
    if not (np.array_equal(dk, dk2) and np.array_equal(dv, dv2)):
        raise Fail(t("{label}: batch {b}, head {h}, query {i} sees no key; changing its dout changed dk or dv. {why}",
                     **where, why=t(_BLIND_WHY)))


@check("numerics", "float32 in gives float32 dq, dk and dv")
def keeps_float32(kit):
    for c in CASES[:2]:
        got = _triple(kit.user(kit.inputs(c, "float32"), case=c, dtype="float32"), c)
        wide = [t("a {dtype} {name}", dtype=value.dtype, name=name) for (name, _), value in zip(OUTPUTS, got)
                if value.dtype != np.float32]
        if wide:
            raise FollowUp(t("{label}: float32 inputs gave {gave} (a follow-up: memory doubles and every later step "
                             "slows). {hint}", label=c.label, gave=t(" and ").join(wide), hint=t(_FLOAT32_HINT)))


@check("numerics", "large scores (q and k times 30) give no NaN or inf: softmax subtracts each row's max")
def large_scores(kit):
    # scores of size ~1000: exp() overflows above 709 in float64 unless each row's max is subtracted
    c = CASES[2]
    dout, q, k, v, mask = kit.inputs(c)
    args = (dout, q * 30.0, k * 30.0, v, mask)
    got = _triple(kit.user(args, case=c), c)
    if not all(np.isfinite(g).all() for g in got):
        raise Fail(t("{label}, q and k times 30: your gradients have NaN or inf: exp of a score above 709 overflows, "
                     "and a row whose scores all lie far below the max subtracted underflows to 0 / 0; subtract each "
                     "row's own max before np.exp", label=c.label))
    _compare_all(kit, args, got, kit.reference(args), t("{label}, q and k times 30", label=c.label))


@check("gradients", "dq, dk and dv equal torch autograd's through F.scaled_dot_product_attention, on every case")
def against_autograd(kit):
    for c in CASES:
        args = kit.inputs(c)
        got = _triple(kit.user(args, case=c), c)
        _compare_all(kit, args, got, autograd(*args), t("{label}, compared with autograd", label=c.label))


@check("properties", "dk summed over the keys is 0 (adding one vector to every key leaves the output unchanged)")
def keys_shift(kit):
    # Each row of softmax's Jacobian sums to 0, so Σ_j dS_ij = 0 and Σ_j dk_j = Σ_i q_i Σ_j dS_ij / √d_k = 0.
    for c in CASES:
        args = kit.inputs(c)
        got = _triple(kit.user(args, case=c), c)
        total = got[1].sum(axis=-2)
        bound = 1e-9 * (np.abs(got[1]).sum(axis=-2) + 1.0)
        if not (np.abs(total) <= bound).all():
            where = tuple(int(i) for i in np.argwhere(~(np.abs(total) <= bound))[0])
            found = kit.name_mistake(args, got)
            raise Fail(t("{label}: dk summed over the keys is {total:.3g}, not 0, at index {where}: adding the same "
                         "vector c to every key adds q·c to a whole row of scores, which softmax ignores, so the "
                         "gradient has no such component; the − rowsum(dP · P) term of dS removes it", label=c.label,
                         total=float(total[where]), where=where), found)


@check("properties", "dv summed over the keys equals dout summed over the queries that see a key")
def values_total(kit):
    # Σ_j dv_j = Σ_i (Σ_j P_ij) dout_i, and each row of P sums to 1 (0 for a query that sees nothing).
    for c in CASES:
        args = kit.inputs(c)
        dout, mask = args[0], args[4]
        got = _triple(kit.user(args, case=c), c)
        sees = np.ones(dout.shape[:-1], dtype=bool) if mask is None else np.broadcast_to(mask, (*_lead(c), c.T_q, c.T_k)).any(-1)
        expected = np.where(sees[..., None], dout, 0.0).sum(axis=-2)
        try:
            compare(got[2].sum(axis=-2), expected, t("dv summed over the keys"), "(..., d_v)")
        except Fail as fail:
            found = kit.name_mistake(args, got)
            raise Fail(t("{label}: {fail}. out = P v and each row of P sums to 1, so Σ_j dv_j = Σ_i dout_i over the "
                         "queries that see a key; dv = Pᵀ dout", label=c.label, fail=fail.message),
                       found or fail.diagnosis) from None
