"""Hidden checks: causal self-attention with a KV cache (prefill, token-by-token decoding, chunks)."""

import math

import torch
from torch import nn

from checker.checks.shared import attention as shared
from checker.checks.shared import masks
from checker.checks.shared.outputs import split
from checker.kit import FLOAT32_INSIDE, Fail, Mistake, case, check, compare, expect_structure, shape_relation
from checker.lang import t

TARGET = "CachedSelfAttention"
BATCH_INDEPENDENT = True  # the property check: no batch item sees another (x and both caches perturbed)
DEVICE = True  # the causal mask is built inside: it must follow x's device
OUTPUTS = [("out", "(B, T_new, D)"), ("k_cache", "(B, H, T_past + T_new, d_k)"),
           ("v_cache", "(B, H, T_past + T_new, d_k)")]

# Every dimension its own size (B, T_past, T_new, T_past + T_new, D, H, d_k). Case 1 is a prefill
# (no cache), case 2 one decoding step, cases 3 and 4 a chunk of several new tokens after a cache:
# there the causal mask must be offset by T_past (THE classic mistake: a mask that is not).
CASES = [
    case(1, B=2, T_past=0, T_new=7, D=12, H=3, d_k=4),
    case(2, B=3, T_past=5, T_new=1, D=10, H=2, d_k=5),
    case(3, B=2, T_past=6, T_new=4, D=15, H=5, d_k=3),
    case(4, B=4, T_past=3, T_new=5, D=14, H=2, d_k=7),
]
# A whole generation: a prompt of 3, then 1, a chunk of 2, 1, 1 new tokens, the caches fed back.
_DECODE = case(5, B=2, T=8, D=12, H=3, d_k=4, schedule=(3, 1, 2, 1, 1))
_CHUNK = case(6, B=2, T_past=6, T_new=3, D=20, H=4, d_k=5)
TIMING = case(7, B=4, T_past=120, T_new=8, D=64, H=4, d_k=16)

CONVENTIONS = (shared.FLOAT32_SOFTMAX,)  # LLaMA's softmax(scores.float()).type_as(q)
# The checks against full causal attention (a chunk after a cache, decoding step by step, an empty cache)
# ask where the mask and the caches are: float32 internals must not read as a wrong mask (whether the
# numbers are precise is the numerics checks' job, on every case).
_SAME = FLOAT32_INSIDE


def init(c):
    return {"d_model": c.D, "num_heads": c.H}


def inputs(c, dtype):
    g = c.generator()
    dt = getattr(torch, dtype)
    x = torch.randn(c.B, c.T_new, c.D, generator=g, dtype=torch.float64).to(dt)
    if c.T_past == 0:
        return x, None, None  # a prefill: nothing cached yet
    k_cache = torch.randn(c.B, c.H, c.T_past, c.d_k, generator=g, dtype=torch.float64).to(dt)
    v_cache = torch.randn(c.B, c.H, c.T_past, c.d_k, generator=g, dtype=torch.float64).to(dt)
    return x, k_cache, v_cache


# ----------------------------------------------------------------------------- named mistakes


class _Knobbed(nn.Module):
    """The reference with knobs; every knob at its default gives the right answer.

    mask: "offset" (right), "plain" (tril of (T_new, T) without the offset), "prefill only" (no mask once
    a cache exists), "none"; offset: added to the diagonal; order: "append" or "prepend".
    """

    mask, offset, order, returned, scale, combine = "offset", 0, "append", "grown", "sqrt_dk", "transpose"
    prescale, values_from = False, "v_cache"

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.H, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, k_cache=None, v_cache=None):
        B, T_new, D = x.shape
        Q, K_new, V_new = (self._split(W(x)) for W in (self.W_q, self.W_k, self.W_v))
        K_new = K_new / math.sqrt(self.d_k) if self.prescale else K_new
        K, V = K_new, V_new
        if k_cache is not None:
            v_cache = k_cache if self.values_from == "k_cache" else v_cache
            pair = ((k_cache, K_new), (v_cache, V_new)) if self.order == "append" else ((K_new, k_cache), (V_new, v_cache))
            K, V = torch.cat(pair[0], dim=2), torch.cat(pair[1], dim=2)
        T_past = K.size(2) - T_new
        d = {"sqrt_dk": math.sqrt(self.d_k), "none": 1.0}[self.scale]
        scores = Q @ K.transpose(-2, -1) / d
        diagonal = {"offset": T_past, "plain": 0, "prefill only": T_past if T_past == 0 else K.size(2),
                    "none": K.size(2), "by T_new": T_new if T_past else 0}[self.mask] + self.offset
        visible = torch.ones(T_new, K.size(2), dtype=torch.bool).tril(diagonal=diagonal)
        attn = scores.masked_fill(~visible, float("-inf")).softmax(dim=-1).nan_to_num(0.0)
        out = attn @ V
        out = out.transpose(1, 2).reshape(B, T_new, D) if self.combine == "transpose" else out.reshape(B, T_new, D)
        out = self.W_o(out)
        if self.returned == "swapped":
            return out, V, K
        if self.returned == "new only":
            return out, K_new, V_new
        return out, K, V

    def _split(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.H, self.d_k).transpose(1, 2)


def _variant(**knobs):
    return type("Mistake", (_Knobbed,), knobs)


_OFFSET_EXPLAIN = (
    "your causal mask is not offset by the cache: new query i sees only keys 0..i (torch.tril of a (T_new, T_past + "
    "T_new) matrix, or tril(T_new, T_new) placed over the first keys), so it misses the cache's later positions and "
    "itself: new query i is at absolute position T_past + i, so use "
    "torch.ones(T_new, T_past + T_new, dtype=torch.bool, device=x.device).tril(diagonal=T_past)")
_NO_MASK_EXPLAIN = (
    "once a cache exists your new positions see each other with no causal mask (masking only at prefill, as if every "
    "later call brought a single token): a chunk of several new tokens after a cache needs the causal mask too, "
    "offset by T_past: torch.ones(T_new, T_past + T_new, dtype=torch.bool, device=x.device).tril(diagonal=T_past)")

MISTAKES = [
    Mistake("mask at prefill only", _variant(mask="prefill only"), _NO_MASK_EXPLAIN),
    Mistake("mask hides the query itself", _variant(offset=-1),
            "your causal mask hides each new position from itself (one diagonal too low, tril(diagonal=T_past - 1)): "
            "new query i sees keys 0 .. T_past + i, itself included: tril(diagonal=T_past)"),
    Mistake("mask shows the next position", _variant(offset=1),
            "your causal mask lets each new position see the next one (one diagonal too high, "
            "tril(diagonal=T_past + 1)): new query i sees keys 0 .. T_past + i: tril(diagonal=T_past)"),
    Mistake("new K/V prepended", _variant(order="prepend"),
            "your caches put the new positions BEFORE the cached ones (torch.cat([K_new, k_cache])): time runs along "
            "axis 2, so append: torch.cat([k_cache, K_new], dim=2)"),
    Mistake("caches returned swapped", _variant(returned="swapped"),
            "your output is right but the caches come back swapped (the values as k_cache, the keys as v_cache): "
            "return (out, K, V)"),
    Mistake("only the new K/V returned", _variant(returned="new only"),
            "your output is right but the caches you return hold only the new positions: return the grown caches, "
            "torch.cat([k_cache, K_new], dim=2), so the next call sees every past position"),
    Mistake("causal mask offset by T_new", _variant(mask="by T_new"),
            "your causal mask is offset by T_new, the number of NEW tokens: new query i is at absolute position "
            "T_past + i, so the offset is the cache length, tril(diagonal=T_past)"),
    Mistake("new keys scaled twice", _variant(prescale=True),
            "your new keys are divided by √d_k before they are cached and the scores are scaled again: the new keys "
            "get 1/d_k, the cached ones 1/√d_k; cache K as W_k gives it and scale the scores once"),
    Mistake("missing scale", _variant(scale="none"),
            "your output equals attention without the 1/√d_k scale: divide the scores by math.sqrt(d_k), "
            "d_k = d_model // num_heads"),
]


# ----------------------------------------------------------------------------- helpers


def _full_forward(kit, c, x):
    """What every call must reproduce: the multi-head attention kata's reference, causal, over the whole x,
    with this case's weights; and K, V of every position, split into heads (B, H, T, d_k)."""
    from checker import catalogue

    w = kit.state(c, "float64")
    mha = catalogue.load_solution(catalogue.find("multi_head_attention")).MultiHeadAttention(c.D, c.H).double()
    mha.load_state_dict(w)
    T = x.size(1)
    causal = torch.ones(T, T, dtype=torch.bool).tril().view(1, 1, T, T)
    with torch.no_grad():
        out, _ = mha.eval()(x, x, causal)
    K, V = ((x @ w[f"{n}.weight"].T + w[f"{n}.bias"]).view(c.B, T, c.H, c.d_k).transpose(1, 2) for n in ("W_k", "W_v"))
    return out, K, V


def _triple(value, c, T_new, T_total):
    split(value, c, ("out", "k_cache", "v_cache"))
    for name, got, want in zip(("out", "k_cache", "v_cache"), value,
                               ((c.B, T_new, c.D), (c.B, c.H, T_total, c.d_k), (c.B, c.H, T_total, c.d_k))):
        if tuple(got.shape) != want:
            grown = t(" (the caches grow by T_new positions on axis 2 each call)") if name != "out" else ""
            raise Fail(t("{label}, T_past={T_past}, T_new={T_new}: {name} should have shape {want}, got {got}{grown}",
                         label=c.label, T_past=T_total - T_new, T_new=T_new, name=name, want=want,
                         got=tuple(got.shape), grown=grown),
                       shape_relation(tuple(got.shape), want, "(B, T_new, D)" if name == "out" else "(B, H, T, d_k)"),
                       general=True)
    if value[0].isnan().any():
        b, pos, _ = value[0].isnan().nonzero()[0].tolist()
        raise Fail(t("{label}, T_past={T_past}, T_new={T_new}: out is NaN at batch {b}, new position {pos}: a query "
                     "with no visible key (softmax of a row of -inf); every new query sees at least itself, so the mask "
                     "hides too much (one diagonal too low? tril(diagonal=T_past) keeps the query itself)",
                     label=c.label, T_past=T_total - T_new, T_new=T_new, b=b, pos=pos))
    return value


# ----------------------------------------------------------------------------- checks


@check("structure", "CachedSelfAttention is an nn.Module with W_q, W_k, W_v, W_o and forward(x, k_cache, v_cache)")
def structure(kit):
    expect_structure(kit, TARGET, module=True, params=["d_model", "num_heads"],
                     forward=["x", "k_cache", "v_cache"], init=init(CASES[0]))
    expect_structure(kit, TARGET, module=True, init=init(CASES[1]))  # D=10, H=2: d_k is not hard-coded


@check("masking", "prefill: position i uses no input after i")
def prefill_causal(kit):
    c = CASES[0]
    leak = _prefill_leak(kit)
    if leak:
        raise Fail(t("{label}, no cache: changing the inputs after position {pos} changed the output at position "
                     "≤ {pos}: the future leaks into the past: apply a causal mask (query i sees keys 0..i)",
                     label=c.label, pos=leak.pos))


def _prefill_leak(kit):
    """Where the prefill (no cache) lets a later input change an earlier output, or None."""
    c = CASES[0]
    x, _, _ = kit.inputs(c)
    return masks.future_leak(lambda x: _triple(kit.user((x, None, None), case=c), c, c.T_new, c.T_new)[0], (x,),
                             (3.0,), same=masks.close(1e-12, 1e-12))


@check("masking", "a chunk of new tokens after a cache: new position i sees the whole cache and the new keys up to itself")
def chunk_after_cache(kit):
    c = _CHUNK
    T = c.T_past + c.T_new
    x = torch.randn(c.B, T, c.D, generator=c.generator(), dtype=torch.float64)
    want_out, K, V = _full_forward(kit, c, x)
    args = (x[:, c.T_past:], K[:, :, : c.T_past], V[:, :, : c.T_past])  # the true cache of the first T_past positions
    got = _triple(kit.user(args, case=c), c, c.T_new, T)
    # the future of new position pos: new positions pos+1.. (their x)
    leak = masks.future_leak(lambda x: _triple(kit.user((x, *args[1:]), case=c), c, c.T_new, T)[0], args[:1], (3.0,),
                             same=masks.close(1e-12, 1e-12), before=got[0])
    if leak:
        pos = leak.pos
        found = kit.name_mistake(args, got, case=c) or (None if _prefill_leak(kit) else t(  # the mask's premise:
            "your new positions read later new positions: a chunk of new tokens after a cache needs the causal "  # a
            "mask too, offset by T_past (new query i is at absolute position T_past + i)"))  # causal prefill
        values = dict(label=c.label, next=pos + 1, abs_next=c.T_past + pos + 1, pos=pos, abs_pos=c.T_past + pos)
        raise Fail(t("{label}: changing new position {next} (absolute {abs_next}) changed the output of new "
                     "position {pos} (absolute {abs_pos}): the new positions see later ones", **values), found)
    try:
        compare(got[0], want_out[:, c.T_past:], "out", "(B, T_new, D)", tol=_SAME)
    except Fail as fail:
        raise Fail(t("{label}, a chunk of {T_new} new tokens after {T_past} cached ones: your out differs from full "
                     "causal attention over all {T} positions at the new ones ({fail})", label=c.label, T_new=c.T_new,
                     T_past=c.T_past, T=T, fail=fail),
                   kit.name_mistake(args, got, case=c)) from None


@check("properties", "token-by-token decoding (caches fed back) equals full causal attention at every step")
def decode_matches_full(kit):
    c = _DECODE
    x = torch.randn(c.B, c.T, c.D, generator=c.generator(), dtype=torch.float64)
    want_out, K, V = _full_forward(kit, c, x)
    k_cache = v_cache = None
    start = 0
    for step, size in enumerate(c.schedule):
        stop = start + size
        cache = t("no cache") if k_cache is None else t("{n} cached", n=start)
        where = t("{label}, step {step} (new positions {start}..{last}, {cache})", label=c.label, step=step,
                  start=start, last=stop - 1, cache=cache)
        got = kit.user((x[:, start:stop], k_cache, v_cache), case=c)
        if not (isinstance(got, (tuple, list)) and len(got) == 3):
            raise Fail(t("{where}: forward should return a tuple (out, k_cache, v_cache)", where=where))
        out, k_cache, v_cache = got
        try:
            compare(out, want_out[:, start:stop], "out", "(B, T_new, D)", tol=_SAME)
            compare(k_cache, K[:, :, :stop], "k_cache", "(B, H, T_past + T_new, d_k)")
            compare(v_cache, V[:, :, :stop], "v_cache", "(B, H, T_past + T_new, d_k)")
        except Fail as fail:
            raise Fail(t("{where}: {fail}; expected the full causal forward over positions 0..{last} at the new "
                         "positions, and caches holding the K and V projections (split into heads) of positions "
                         "0..{last} in order", where=where, fail=fail, last=stop - 1)) from None
        start = stop


@check("properties", "an empty cache (B, H, 0, d_k) acts like no cache", followup=True)
def empty_cache(kit):
    c = CASES[0]
    x, _, _ = kit.inputs(c)
    empty = torch.zeros(c.B, c.H, 0, c.d_k, dtype=torch.float64)
    got = _triple(kit.user((x, empty, empty.clone()), case=c), c, c.T_new, c.T_new)
    want = kit.reference((x, None, None), case=c)
    try:
        for name, u, e in zip(("out", "k_cache", "v_cache"), got, want):
            compare(u, e, name, tol=_SAME)
    except Fail as fail:
        raise Fail(t("{label}: with k_cache and v_cache of T_past = 0 positions the result should equal the prefill "
                     "without a cache ({fail}): take T_past from k_cache.size(2). Follow-up: a caller that preallocates "
                     "its caches starts from T_past = 0; code that only tests `k_cache is None` works, code that "
                     "unpacks or indexes the cache's last position does not", label=c.label, fail=fail)) from None
