"""Hidden checks: causal self-attention with a KV cache (prefill, token-by-token decoding, chunks)."""

import math

import torch
from torch import nn

from checker.checks.shared import attention as shared
from checker.kit import FLOAT32_INSIDE, Fail, Mistake, case, check, compare, expect_structure
from checker.lang import register, t

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
    Mistake("causal mask not offset", _variant(mask="plain"), _OFFSET_EXPLAIN),
    Mistake("mask at prefill only", _variant(mask="prefill only"), _NO_MASK_EXPLAIN),
    Mistake("no causal mask", _variant(mask="none"),
            "your output equals attention with no causal mask: every position sees the later ones; new query i may "
            "see keys 0 .. T_past + i only (tril(diagonal=T_past) on a (T_new, T_past + T_new) mask)"),
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
    Mistake("values appended to the key cache", _variant(values_from="k_cache"),
            "your new values are appended to k_cache (a copy-paste slip): V = torch.cat([v_cache, V], dim=2)"),
    Mistake("missing scale", _variant(scale="none"),
            "your output equals attention without the 1/√d_k scale: divide the scores by math.sqrt(d_k), "
            "d_k = d_model // num_heads"),
    Mistake("combine without transpose", _variant(combine="view"),
            "your heads are combined without a transpose, so the positions get mixed: use "
            "out.transpose(1, 2).reshape(B, T_new, d_model)"),
]


# ----------------------------------------------------------------------------- helpers


def _full_forward(kit, c, x):
    """What every call must reproduce: the multi-head attention kata's reference, causal, over the whole x,
    with this case's weights; and K, V of every position, split into heads (B, H, T, d_k)."""
    from checker import catalogue, engine

    w = kit.state(c, "float64")
    mha = engine.load_solution(catalogue.find("multi_head_attention")).MultiHeadAttention(c.D, c.H).double()
    mha.load_state_dict(w)
    T = x.size(1)
    causal = torch.ones(T, T, dtype=torch.bool).tril().view(1, 1, T, T)
    with torch.no_grad():
        out, _ = mha.eval()(x, x, causal)
    K, V = ((x @ w[f"{n}.weight"].T + w[f"{n}.bias"]).view(c.B, T, c.H, c.d_k).transpose(1, 2) for n in ("W_k", "W_v"))
    return out, K, V


def _triple(value, c, T_new, T_total):
    if not (isinstance(value, (tuple, list)) and len(value) == 3 and all(isinstance(v, torch.Tensor) for v in value)):
        raise Fail(t("{label}: forward should return a tuple (out, k_cache, v_cache) of tensors", label=c.label))
    for name, got, want in zip(("out", "k_cache", "v_cache"), value,
                               ((c.B, T_new, c.D), (c.B, c.H, T_total, c.d_k), (c.B, c.H, T_total, c.d_k))):
        if tuple(got.shape) != want:
            grown = t(" (the caches grow by T_new positions on axis 2 each call)") if name != "out" else ""
            raise Fail(t("{label}, T_past={T_past}, T_new={T_new}: {name} should have shape {want}, got {got}{grown}",
                         label=c.label, T_past=T_total - T_new, T_new=T_new, name=name, want=want,
                         got=tuple(got.shape), grown=grown))
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
    x, _, _ = kit.inputs(c)
    out = _triple(kit.user((x, None, None), case=c), c, c.T_new, c.T_new)[0]
    for pos in range(c.T_new - 1):
        changed = x.clone()
        changed[:, pos + 1:] += 3.0  # change only the future of position pos
        out2 = _triple(kit.user((changed, None, None), case=c), c, c.T_new, c.T_new)[0]
        if not torch.allclose(out[:, : pos + 1], out2[:, : pos + 1], rtol=1e-12, atol=1e-12):
            raise Fail(t("{label}, no cache: changing the inputs after position {pos} changed the output at position "
                         "≤ {pos}: the future leaks into the past: apply a causal mask (query i sees keys 0..i)",
                         label=c.label, pos=pos))


@check("masking", "a chunk of new tokens after a cache: new position i sees the whole cache and the new keys up to itself")
def chunk_after_cache(kit):
    c = _CHUNK
    T = c.T_past + c.T_new
    x = torch.randn(c.B, T, c.D, generator=c.generator(), dtype=torch.float64)
    want_out, K, V = _full_forward(kit, c, x)
    args = (x[:, c.T_past:], K[:, :, : c.T_past], V[:, :, : c.T_past])  # the true cache of the first T_past positions
    got = _triple(kit.user(args, case=c), c, c.T_new, T)
    for pos in range(c.T_new - 1):  # the future of new position pos: new positions pos+1.. (their x)
        changed = args[0].clone()
        changed[:, pos + 1:] += 3.0
        out2 = _triple(kit.user((changed, *args[1:]), case=c), c, c.T_new, T)[0]
        if not torch.allclose(got[0][:, : pos + 1], out2[:, : pos + 1], rtol=1e-12, atol=1e-12):
            found = kit.name_mistake(args, got, case=c) or t(
                "your new positions read later new positions: a chunk of new tokens after a cache needs the causal "
                "mask too, offset by T_past (new query i is at absolute position T_past + i)")
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


_ZH = register({
    "your causal mask is offset by T_new, the number of NEW tokens: new query i is at absolute position "
    "T_past + i, so the offset is the cache length, tril(diagonal=T_past)":
        "你的因果掩码按 T_new（新词元的个数）偏移：第 i 个新查询的绝对位置是 T_past + i，所以偏移量应是缓存长度，"
        "tril(diagonal=T_past)",
    "your new keys are divided by √d_k before they are cached and the scores are scaled again: the new keys "
    "get 1/d_k, the cached ones 1/√d_k; cache K as W_k gives it and scale the scores once":
        "你的新键在存入缓存之前就除以了 √d_k，分数又缩放了一次：新键得到 1/d_k，缓存里的键得到 1/√d_k；"
        "请按 W_k 的输出原样缓存 K，只对分数缩放一次",
    "your new values are appended to k_cache (a copy-paste slip): V = torch.cat([v_cache, V], dim=2)":
        "你把新的值接在了 k_cache 后面（复制粘贴的笔误）：V = torch.cat([v_cache, V], dim=2)",
    "CachedSelfAttention is an nn.Module with W_q, W_k, W_v, W_o and forward(x, k_cache, v_cache)":
        "CachedSelfAttention 是一个 nn.Module，包含 W_q、W_k、W_v、W_o 和 forward(x, k_cache, v_cache)",
    "prefill: position i uses no input after i": "预填充：位置 i 不用到 i 之后的任何输入",
    "a chunk of new tokens after a cache: new position i sees the whole cache and the new keys up to itself":
        "缓存之后的一段新词元：新位置 i 能看到整个缓存，以及直到它自己为止的新键",
    "token-by-token decoding (caches fed back) equals full causal attention at every step":
        "逐词元解码（把缓存传回去）在每一步都等于完整的因果注意力",
    "an empty cache (B, H, 0, d_k) acts like no cache": "空缓存 (B, H, 0, d_k) 的效果与没有缓存相同",
    "your causal mask is not offset by the cache: new query i sees only keys 0..i (torch.tril of a (T_new, T_past + "
    "T_new) matrix, or tril(T_new, T_new) placed over the first keys), so it misses the cache's later positions and "
    "itself: new query i is at absolute position T_past + i, so use "
    "torch.ones(T_new, T_past + T_new, dtype=torch.bool, device=x.device).tril(diagonal=T_past)":
        "你的因果掩码没有按缓存偏移：新查询 i 只能看到键 0..i（对 (T_new, T_past + T_new) 矩阵直接做 torch.tril，"
        "或者把 tril(T_new, T_new) 放在最前面的键上），于是看不到缓存中靠后的位置和它自己：新查询 i 的绝对位置是 "
        "T_past + i，所以要用 torch.ones(T_new, T_past + T_new, dtype=torch.bool, device=x.device).tril(diagonal=T_past)",
    "once a cache exists your new positions see each other with no causal mask (masking only at prefill, as if every "
    "later call brought a single token): a chunk of several new tokens after a cache needs the causal mask too, offset "
    "by T_past: torch.ones(T_new, T_past + T_new, dtype=torch.bool, device=x.device).tril(diagonal=T_past)":
        "一旦有了缓存，你的新位置之间就没有因果掩码、互相可见（只在预填充时做掩码，好像之后每次调用都只带一个词元）："
        "缓存之后的一段多个新词元同样需要因果掩码，并按 T_past 偏移："
        "torch.ones(T_new, T_past + T_new, dtype=torch.bool, device=x.device).tril(diagonal=T_past)",
    "your output equals attention with no causal mask: every position sees the later ones; new query i may see keys "
    "0 .. T_past + i only (tril(diagonal=T_past) on a (T_new, T_past + T_new) mask)":
        "你的输出等于没有因果掩码的注意力：每个位置都看到了后面的位置；新查询 i 只能看到键 0 .. T_past + i"
        "（在 (T_new, T_past + T_new) 的掩码上做 tril(diagonal=T_past)）",
    "your causal mask hides each new position from itself (one diagonal too low, tril(diagonal=T_past - 1)): new query "
    "i sees keys 0 .. T_past + i, itself included: tril(diagonal=T_past)":
        "你的因果掩码让每个新位置看不到它自己（对角线低了一条，tril(diagonal=T_past - 1)）：新查询 i 能看到键 "
        "0 .. T_past + i，包括它自己：tril(diagonal=T_past)",
    "your causal mask lets each new position see the next one (one diagonal too high, tril(diagonal=T_past + 1)): new "
    "query i sees keys 0 .. T_past + i: tril(diagonal=T_past)":
        "你的因果掩码让每个新位置看到了下一个位置（对角线高了一条，tril(diagonal=T_past + 1)）：新查询 i 只能看到键 "
        "0 .. T_past + i：tril(diagonal=T_past)",
    "your caches put the new positions BEFORE the cached ones (torch.cat([K_new, k_cache])): time runs along axis 2, "
    "so append: torch.cat([k_cache, K_new], dim=2)":
        "你的缓存把新位置放在了已缓存的位置之前（torch.cat([K_new, k_cache])）：时间沿第 2 个轴排列，"
        "所以要追加在后面：torch.cat([k_cache, K_new], dim=2)",
    "your output is right but the caches come back swapped (the values as k_cache, the keys as v_cache): return "
    "(out, K, V)":
        "你的输出是对的，但返回的缓存对调了（值作为 k_cache，键作为 v_cache）：要返回 (out, K, V)",
    "your output is right but the caches you return hold only the new positions: return the grown caches, "
    "torch.cat([k_cache, K_new], dim=2), so the next call sees every past position":
        "你的输出是对的，但返回的缓存只包含新位置：要返回增长后的缓存 torch.cat([k_cache, K_new], dim=2)，"
        "这样下一次调用才能看到所有过去的位置",
    "your output equals attention without the 1/√d_k scale: divide the scores by math.sqrt(d_k), "
    "d_k = d_model // num_heads":
        "你的输出等于没有 1/√d_k 缩放的注意力：要把分数除以 math.sqrt(d_k)，d_k = d_model // num_heads",
    "your heads are combined without a transpose, so the positions get mixed: use "
    "out.transpose(1, 2).reshape(B, T_new, d_model)":
        "你合并头时没有转置，所以位置被打乱了：要用 out.transpose(1, 2).reshape(B, T_new, d_model)",
    "{label}: forward should return a tuple (out, k_cache, v_cache) of tensors":
        "{label}：forward 应该返回由张量组成的元组 (out, k_cache, v_cache)",
    " (the caches grow by T_new positions on axis 2 each call)": "（每次调用，缓存在第 2 个轴上增长 T_new 个位置）",
    "{label}, T_past={T_past}, T_new={T_new}: {name} should have shape {want}, got {got}{grown}":
        "{label}，T_past={T_past}，T_new={T_new}：{name} 的形状应为 {want}，实际是 {got}{grown}",
    "{label}, T_past={T_past}, T_new={T_new}: out is NaN at batch {b}, new position {pos}: a query with no visible key "
    "(softmax of a row of -inf); every new query sees at least itself, so the mask hides too much (one diagonal too "
    "low? tril(diagonal=T_past) keeps the query itself)":
        "{label}，T_past={T_past}，T_new={T_new}：out 在批次 {b}、新位置 {pos} 处是 NaN：这是一个看不到任何键的查询"
        "（对一整行 -inf 做 softmax）；每个新查询至少能看到它自己，所以掩码遮挡得太多了（对角线低了一条？"
        "tril(diagonal=T_past) 会保留查询自己）",
    "{label}, no cache: changing the inputs after position {pos} changed the output at position ≤ {pos}: the future "
    "leaks into the past: apply a causal mask (query i sees keys 0..i)":
        "{label}，没有缓存：改动位置 {pos} 之后的输入，改变了位置 ≤ {pos} 的输出：未来的信息泄漏到了过去："
        "要加因果掩码（查询 i 只能看到键 0..i）",
    "{label}: changing new position {next} (absolute {abs_next}) changed the output of new position {pos} (absolute "
    "{abs_pos}): the new positions see later ones":
        "{label}：改动新位置 {next}（绝对位置 {abs_next}），改变了新位置 {pos}（绝对位置 {abs_pos}）的输出："
        "新位置看到了后面的位置",
    "your new positions read later new positions: a chunk of new tokens after a cache needs the causal mask too, "
    "offset by T_past (new query i is at absolute position T_past + i)":
        "你的新位置读到了后面的新位置：缓存之后的一段新 token 同样需要因果掩码，并按 T_past 偏移"
        "（新查询 i 的绝对位置是 T_past + i）",
    "{label}, a chunk of {T_new} new tokens after {T_past} cached ones: your out differs from full causal attention "
    "over all {T} positions at the new ones ({fail})":
        "{label}，在 {T_past} 个已缓存词元之后的一段 {T_new} 个新词元：在新位置上，你的 out 与对全部 {T} 个位置做完整"
        "因果注意力的结果不同（{fail}）",
    "no cache": "没有缓存",
    "{n} cached": "已缓存 {n} 个",
    "{label}, step {step} (new positions {start}..{last}, {cache})": "{label}，第 {step} 步（新位置 {start}..{last}，{cache}）",
    "{where}: forward should return a tuple (out, k_cache, v_cache)": "{where}：forward 应该返回元组 (out, k_cache, v_cache)",
    "{where}: {fail}; expected the full causal forward over positions 0..{last} at the new positions, and caches "
    "holding the K and V projections (split into heads) of positions 0..{last} in order":
        "{where}：{fail}；在新位置上应等于对位置 0..{last} 做完整因果前向计算的结果，缓存应按顺序保存位置 0..{last} "
        "的 K 和 V 投影（已拆分成多个头）",
    "{label}: with k_cache and v_cache of T_past = 0 positions the result should equal the prefill without a cache "
    "({fail}): take T_past from k_cache.size(2). Follow-up: a caller that preallocates its caches starts from "
    "T_past = 0; code that only tests `k_cache is None` works, code that unpacks or indexes the cache's last position "
    "does not":
        "{label}：k_cache 和 v_cache 只有 T_past = 0 个位置时，结果应等于没有缓存的预填充（{fail}）：要从 "
        "k_cache.size(2) 取 T_past。追问：预先分配缓存的调用方是从 T_past = 0 开始的；只判断 `k_cache is None` 的代码"
        "没问题，而解包缓存或索引缓存最后一个位置的代码就会出错",
})
