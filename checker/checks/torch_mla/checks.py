"""Hidden checks: DeepSeek-V2's multi-head latent attention, its latent KV cache and decoupled RoPE key.

Every result is also compared with an explicit computation written here head by head (_explicit), and
token-by-token decoding with the caches fed back must equal the full causal forward.
"""

import math

import torch
from torch import nn

from checker.checks.shared import masks
from checker.checks.shared.outputs import split
from checker.kit import FLOAT32_INSIDE, Convention, Fail, Mistake, case, check, compare, expect_structure, shape_relation
from checker.lang import t

TARGET = "MultiHeadLatentAttention"
BATCH_INDEPENDENT = True
DEVICE = True  # positions and the causal mask are built inside: they must follow x's device
OUTPUTS = [("out", "(B, T_new, D)"), ("c_kv", "(B, T, d_latent)"), ("k_rope", "(B, T, d_rope)")]
# RoPE's angles are often computed in float32 whatever x is: HF's inv_freq buffer calls .float() and DeepSeek's
# cos/sin cache is float32. That is standard, correct code, so float64 results are held to float32 accuracy
# (the angles reach 8 rad here: about 1e-8 off). Every named mistake is off by far more.
TOLERANCES = {"float64": FLOAT32_INSIDE}

# Every dimension its own size. Case 1 is a prefill (no cache); case 2 a chunk of 2 after 4 cached
# positions; case 3 one decoding step after 6. d_nope is even in cases 1 and 3 and d_latent in all, so
# RoPE on the nope part or on the latent can run (and be named).
CASES = [
    case(1, B=2, T_past=0, T_new=7, D=20, H=3, d_latent=8, d_nope=6, d_rope=4, d_v=5),
    case(2, B=3, T_past=4, T_new=2, D=18, H=5, d_latent=10, d_nope=9, d_rope=6, d_v=7),
    case(3, B=2, T_past=6, T_new=1, D=16, H=4, d_latent=12, d_nope=10, d_rope=8, d_v=3),
]
_DECODE = case(5, B=2, T=8, D=20, H=3, d_latent=10, d_nope=6, d_rope=4, d_v=5, schedule=(3, 1, 2, 1, 1))
TIMING = case(6, B=2, T_past=120, T_new=8, D=64, H=4, d_latent=24, d_nope=16, d_rope=8, d_v=12)


def init(c):
    return {"d_model": c.D, "num_heads": c.H, "d_latent": c.d_latent, "d_nope": c.d_nope, "d_rope": c.d_rope,
            "d_v": c.d_v}


def inputs(c, dtype):
    g = c.generator()
    dt = getattr(torch, dtype)
    x = torch.randn(c.B, c.T_new, c.D, generator=g, dtype=torch.float64).to(dt)
    if c.T_past == 0:
        return x, None, None  # a prefill: nothing cached yet
    c_cache = torch.randn(c.B, c.T_past, c.d_latent, generator=g, dtype=torch.float64).to(dt)
    k_rope_cache = torch.randn(c.B, c.T_past, c.d_rope, generator=g, dtype=torch.float64).to(dt)
    return x, c_cache, k_rope_cache


# ----------------------------------------------------------------------------- named mistakes


def _rope(x, positions, base, layout="half"):
    """layout: "half" (pairs (i, i + d/2)), "deepseek" (reordered into halves first), "interleaved" (pairs (2i, 2i + 1)
    rotated in place, Meta LLaMA's view_as_complex)."""
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angle = positions.to(x.dtype)[:, None] * theta
    cos, sin = angle.cos(), angle.sin()
    if layout == "deepseek":  # pairs (2i, 2i + 1) moved into halves first, and kept in that order
        x = torch.cat([x[..., 0::2], x[..., 1::2]], dim=-1)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
    a, b = x.chunk(2, dim=-1)
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


class _Knobbed(nn.Module):
    """MLA with knobs; every knob at its default gives the right answer.

    rope_on: "rope" (right), "nope" (the nope parts rotated too), "latent" (c_kv rotated); scale: "full" or
    "nope"; offset: RoPE positions from T_past (right) or from 0; mask: "offset", "top-left", "none";
    raw_key: the RoPE key cached before rotation (and the whole cache rotated at every call);
    layout: "half", "deepseek" (DeepSeek-V2's released code: the coordinates reordered, then half-split) or
    "interleaved"; reroll: the cached RoPE key rotated again at every call; q_split: "nope-first" or "rope-first";
    key_order: "nope-first" or "rope-first" ([k_rope | k_nope] against [q_nope | q_rope]);
    view: the tensors cut into heads with a bare view, no transpose: a tuple of "q" (W_q x viewed as
    (B, H, T_new, d)), "k" (W_uk c_kv as (B, H, T, d_nope)), "v" (W_uv c_kv as (B, H, T, d_v)) and "out" (the heads
    (B, H, T_new, d_v) reshaped to (B, T_new, H·d_v) without the transpose back).
    """

    knobs: dict = {}

    def __init__(self, d_model, num_heads, d_latent, d_nope, d_rope, d_v, base=10000.0):
        super().__init__()
        self.H, self.d_nope, self.d_rope, self.d_v, self.base = num_heads, d_nope, d_rope, d_v, base
        self.W_q = nn.Linear(d_model, num_heads * (d_nope + d_rope), bias=False)
        self.W_dkv = nn.Linear(d_model, d_latent, bias=False)
        self.W_kr = nn.Linear(d_model, d_rope, bias=False)
        self.W_uk = nn.Linear(d_latent, num_heads * d_nope, bias=False)
        self.W_uv = nn.Linear(d_latent, num_heads * d_v, bias=False)
        self.W_o = nn.Linear(num_heads * d_v, d_model, bias=False)

    def forward(self, x, c_cache=None, k_rope_cache=None):
        kn = {"rope_on": "rope", "scale": "full", "offset": True, "mask": "offset", "raw_key": False,
              "layout": "half", "reroll": False, "q_split": "nope-first", "key_order": "nope-first",
              "view": (), **self.knobs}
        B, T_new, _ = x.shape
        T_past = 0 if c_cache is None else c_cache.size(1)
        start = T_past if kn["offset"] else 0
        pos = torch.arange(start, start + T_new)

        def rot(v, p):
            return _rope(v, p, self.base, kn["layout"])

        def heads(name, t, T, d):  # (B, T, H·d) -> (B, H, T, d)
            return t.view(B, self.H, T, d) if name in kn["view"] else t.view(B, T, self.H, d).transpose(1, 2)

        q = heads("q", self.W_q(x), T_new, self.d_nope + self.d_rope)
        if kn["q_split"] == "rope-first":
            q_rope, q_nope = q.split([self.d_rope, self.d_nope], dim=-1)
        else:
            q_nope, q_rope = q.split([self.d_nope, self.d_rope], dim=-1)
        q_rope = rot(q_rope, pos)
        c_kv = self.W_dkv(x)
        if kn["rope_on"] == "latent":
            c_kv = rot(c_kv, pos)
        k_new = self.W_kr(x) if kn["raw_key"] else rot(self.W_kr(x), pos)
        if c_cache is not None:
            c_kv = torch.cat([c_cache, c_kv], dim=1)
            k_new = torch.cat([k_rope_cache, k_new], dim=1)
        T = c_kv.size(1)
        k_rope = rot(k_new, torch.arange(T)) if kn["raw_key"] or kn["reroll"] else k_new
        k_nope = heads("k", self.W_uk(c_kv), T, self.d_nope)
        if kn["rope_on"] == "nope":
            q_nope, k_nope = rot(q_nope, pos), rot(k_nope, torch.arange(T))
        v = heads("v", self.W_uv(c_kv), T, self.d_v)
        shared = k_rope[:, None].expand(B, self.H, T, self.d_rope)
        k = torch.cat([shared, k_nope] if kn["key_order"] == "rope-first" else [k_nope, shared], dim=-1)
        q = torch.cat([q_nope, q_rope], dim=-1)
        scale = self.d_nope + self.d_rope if kn["scale"] == "full" else self.d_nope
        scores = q @ k.mT / math.sqrt(scale)
        visible = {"offset": torch.ones(T_new, T, dtype=torch.bool).tril(T_past),
                   "top-left": torch.ones(T_new, T, dtype=torch.bool).tril(),
                   "none": torch.ones(T_new, T, dtype=torch.bool)}[kn["mask"]]
        weights = scores.masked_fill(~visible, float("-inf")).softmax(dim=-1)
        out = weights @ v  # (B, H, T_new, d_v)
        out = (out if "out" in kn["view"] else out.transpose(1, 2)).reshape(B, T_new, self.H * self.d_v)
        return self.W_o(out), c_kv, k_new


def _variant(**knobs):
    return type("Wrong", (_Knobbed,), {"knobs": knobs})


MISTAKES = [
    Mistake("RoPE on the nope part", _variant(rope_on="nope"),
            "your output equals MLA with RoPE applied to q_nope and k_nope too: the nope parts carry no position. "
            "k_nope comes from the latent, and a rotation there could not be absorbed into W_uk; RoPE goes on "
            "q_rope and on the shared key W_kr x only"),
    Mistake("RoPE on the latent", _variant(rope_on="latent"),
            "your latent c_kv is rotated by RoPE: the latent carries no position (that is why the paper decouples "
            "it); rotate only q_rope and the shared key W_kr x, and cache c_kv = W_dkv x as it is"),
    Mistake("RoPE positions from 0", _variant(offset=False),
            "your RoPE angles count the new positions from 0: new position i is at absolute position T_past + i "
            "(positions = torch.arange(T_past, T_past + T_new)), for q_rope and for the new RoPE keys"),
    Mistake("causal mask without offset", _variant(mask="top-left"),
            "your causal mask is tril(T_new, T) from the top-left corner: after a cache, new position i sees every "
            "cached position and the new ones up to itself, torch.ones(T_new, T).tril(T_past)"),
    Mistake("RoPE key cached before rotation", _variant(raw_key=True),
            "your k_rope cache holds W_kr x before RoPE (and rotates the whole cache at every call): the cache "
            "holds the RoPE key already rotated at its own position, k_rope = RoPE(W_kr x), so that a decoding "
            "step rotates only the new key"),
    Mistake("cached RoPE key rotated again", _variant(reroll=True),
            "your cached RoPE keys are rotated a second time: k_rope_cache is already rotated at its own positions, so "
            "rotate only the new keys W_kr x at T_past .. T_past + T_new - 1, then concatenate them to the cache as it is"),
    Mistake("interleaved RoPE pairs", _variant(layout="interleaved"),
            "your RoPE rotates the interleaved pairs (2i, 2i + 1), as Meta's LLaMA code does with view_as_complex: this "
            "kata uses the half-split layout of HF LLaMA's rotate_half, pairs (i, i + d_rope/2)"),
    Mistake("q split as [q_rope | q_nope]", _variant(q_split="rope-first"),
            "your query head is split as [q_rope | q_nope]: each head of W_q x is [q_nope | q_rope], the first d_nope "
            "numbers without position, then the d_rope numbers RoPE rotates (q.split([d_nope, d_rope], dim=-1))"),
    Mistake("key concatenated as [k_rope | k_nope]", _variant(key_order="rope-first"),
            "your key is [k_rope | k_nope] while the query is [q_nope | q_rope]: the two must line up, so each key is "
            "[k_nope_h | k_rope], the nope part first"),
    Mistake("heads viewed without the transpose", _variant(view=("q",)),
            "your queries are W_q(x).view(B, H, T_new, d) without a transpose: that mixes tokens between heads (and "
            "leaks future positions); view as (B, T_new, H, d_nope + d_rope), then transpose(1, 2)"),
    Mistake("key heads viewed without the transpose", _variant(view=("k",)),
            "your keys' nope parts are W_uk(c_kv).view(B, H, T, d_nope) without a transpose: that mixes positions "
            "between heads (and leaks future positions); view as (B, T, H, d_nope), then transpose(1, 2)"),
    Mistake("value heads viewed without the transpose", _variant(view=("v",)),
            "your values are W_uv(c_kv).view(B, H, T, d_v) without a transpose: that mixes positions between heads "
            "(and leaks future positions); view as (B, T, H, d_v), then transpose(1, 2)"),
    Mistake("q, k and v viewed without the transpose", _variant(view=("q", "k", "v")),
            "your queries, keys and values are cut into heads with a bare view (B, H, T, d), no transpose: that mixes "
            "positions between heads (and leaks future positions); view as (B, T, H, d), then transpose(1, 2)"),
    Mistake("every head reshape without the transpose", _variant(view=("q", "k", "v", "out")),
            "your heads are cut with a bare view (B, H, T, d) and joined with a bare reshape, no transpose either "
            "way: that mixes positions between heads (and leaks future positions); view as (B, T, H, d), then "
            "transpose(1, 2), and transpose back before the reshape to (B, T_new, H·d_v)"),
]

# DeepSeek-V2's released code (modeling_deepseek.py) reorders q_pe and k_pe, pairs (2i, 2i + 1) moved into
# halves (view(b, h, s, d // 2, 2).transpose(4, 3)), before rotate_half, and caches k_pe in that order: the
# same attention as reordering the rows of W_kr and of W_q's RoPE part. Right, and accepted as that code's
# convention (its out equals this kata's up to that reordering of weights; its k_rope cache is reordered).
CONVENTIONS = (
    Convention("DeepSeek-V2's reordered RoPE", (
        "your RoPE first reorders the coordinates of q_rope and of the RoPE key, pairs (2i, 2i + 1) moved into "
        "halves, then rotates with rotate_half, as DeepSeek-V2's released code does; your k_rope cache is in that "
        "order. This kata's contract rotates the half-split pairs (i, i + d_rope/2) of W_kr x as it is, as HF "
        "LLaMA's rotate_half; DeepSeek's order was allowed for every later check"),
        impl=_variant(layout="deepseek"), tol=FLOAT32_INSIDE),
)


# ----------------------------------------------------------------------------- the explicit computation


def _explicit(w, c, x, c_cache=None, k_rope_cache=None, layout="half"):
    """MLA written head by head from the state dict w: (out, c_kv, k_rope), float64."""
    B, T_new, _ = x.shape
    T_past = 0 if c_cache is None else c_cache.size(1)
    positions = torch.arange(T_past, T_past + T_new)
    c_new = x @ w["W_dkv.weight"].T  # (B, T_new, d_latent)
    kr_new = _rope(x @ w["W_kr.weight"].T, positions, 10000.0, layout)  # (B, T_new, d_rope)
    c_kv = c_new if c_cache is None else torch.cat([c_cache, c_new], dim=1)
    k_rope = kr_new if c_cache is None else torch.cat([k_rope_cache, kr_new], dim=1)
    T = c_kv.size(1)
    dq = c.d_nope + c.d_rope
    W_q = w["W_q.weight"].view(c.H, dq, c.D)
    W_uk = w["W_uk.weight"].view(c.H, c.d_nope, c.d_latent)
    W_uv = w["W_uv.weight"].view(c.H, c.d_v, c.d_latent)
    heads = []
    for h in range(c.H):
        q = x @ W_q[h].T  # (B, T_new, d_nope + d_rope)
        q = torch.cat([q[..., : c.d_nope], _rope(q[..., c.d_nope:], positions, 10000.0, layout)], dim=-1)
        k = torch.cat([c_kv @ W_uk[h].T, k_rope], dim=-1)  # (B, T, d_nope + d_rope)
        v = c_kv @ W_uv[h].T  # (B, T, d_v)
        scores = torch.einsum("bid,bjd->bij", q, k) / math.sqrt(dq)
        future = torch.arange(T)[None, :] > (T_past + torch.arange(T_new))[:, None]
        heads.append(scores.masked_fill(future, float("-inf")).softmax(-1) @ v)  # (B, T_new, d_v)
    out = torch.cat(heads, dim=-1) @ w["W_o.weight"].T
    return out, c_kv, k_rope


# ----------------------------------------------------------------------------- checks


def _triple(value, c, T_new, T):
    """The three results, or a Fail that says which has the wrong form (a per-head cache is named)."""
    out, c_kv, k_rope = split(value, c, ("out", "c_kv", "k_rope"), out=((c.B, T_new, c.D), "(B, T_new, D)"))
    for name, got, width, legend in (("c_kv", c_kv, c.d_latent, "(B, T, d_latent)"),
                                     ("k_rope", k_rope, c.d_rope, "(B, T, d_rope)")):
        want = (c.B, T, width)
        if tuple(got.shape) == want:
            continue
        if got.dim() == 4 and got.size(1) == c.H:
            raise Fail(t("{label}: the cache {name} has shape {got}, one entry per head: MLA caches per token only "
                         "the latent c_kv (d_latent numbers) and the ONE RoPE key shared by all heads (d_rope), "
                         "{legend} = {want}; keys and values per head are rebuilt from c_kv by W_uk and W_uv",
                         label=c.label, name=name, got=tuple(got.shape), legend=legend, want=want),
                       t(_CACHE_EXPLAIN))
        raise Fail(t("{label}: {name} should have shape {legend} = {want}, got {got} (the cache grows by T_new "
                     "positions on axis 1 each call)", label=c.label, name=name, legend=legend, want=want,
                     got=tuple(got.shape)), shape_relation(tuple(got.shape), tuple(want), legend), general=True)
    return out, c_kv, k_rope


_CACHE_EXPLAIN = ("your cache stores keys or values per head: the point of MLA is a cache of d_latent + d_rope numbers "
                  "per token instead of 2·H·d_k; return c_kv (B, T, d_latent) and k_rope (B, T, d_rope)")
_PER_HEAD_EXPLAIN = ("your RoPE key is per head: DeepSeek-V2 uses ONE RoPE key k_rope = RoPE(W_kr x) of size d_rope, "
                     "shared by every head (W_kr is nn.Linear(d_model, d_rope)), so the cache holds d_rope numbers per "
                     "token, not H·d_rope")


@check("structure", "MultiHeadLatentAttention is an nn.Module with W_q, W_dkv, W_kr, W_uk, W_uv, W_o and forward(x, "
                    "c_cache, k_rope_cache)")
def structure(kit):
    c = CASES[0]
    info = kit.inspect(TARGET)
    if info["exists"] and info["is_module"]:
        built = kit.inspect(TARGET, init(c))
        shape = built["parameters"].get("W_kr.weight")
        if shape == [c.H * c.d_rope, c.D]:
            raise Fail(t("{label}: W_kr.weight has shape {got}, H·d_rope rows: expected (d_rope, D) = {want}",
                         label=c.label, got=tuple(shape), want=(c.d_rope, c.D)), t(_PER_HEAD_EXPLAIN))
    expect_structure(kit, TARGET, module=True, params=["d_model", "num_heads", "d_latent", "d_nope", "d_rope", "d_v"],
                     forward=["x", "c_cache", "k_rope_cache"], init=init(c))
    expect_structure(kit, TARGET, module=True, init=init(CASES[1]))  # other sizes: nothing hard-coded


@check("shapes", "the cache holds only the latent c_kv (B, T, d_latent) and the shared RoPE key (B, T, d_rope)")
def cache_contents(kit):
    for c in CASES:
        _triple(kit.user(kit.inputs(c), case=c), c, c.T_new, c.T_past + c.T_new)


@check("masking", "prefill: position i uses no input after i")
def prefill_causal(kit):
    c = CASES[0]
    x, _, _ = kit.inputs(c)
    leak = masks.future_leak(lambda x: _triple(kit.user((x, None, None), case=c), c, c.T_new, c.T_new)[0], (x,),
                             (3.0,), same=masks.close(1e-12, 1e-12))
    if leak:
        raise Fail(t("{label}, no cache: changing the inputs after position {pos} changed the output at positions "
                     "<= {pos}: the future leaks. Look at the causal mask (query i sees keys 0..i) and at every "
                     "view into heads: a view (B, H, T, d) without transpose(1, 2) mixes positions too",
                     label=c.label, pos=leak.pos), kit.name_mistake((x, None, None), kit.user((x, None, None), case=c),
                                                                    case=c, outputs=OUTPUTS))


@check("properties", "equals the explicit computation, head by head: keys [W_uk c_kv | RoPE(W_kr x)], "
                     "queries [q_nope | RoPE(q_rope)], scale 1/√(d_nope + d_rope)")
def explicit(kit):
    layout = "deepseek" if kit.convention is not None else "half"
    for c in CASES:
        args = kit.inputs(c)
        got = _triple(kit.user(args, case=c), c, c.T_new, c.T_past + c.T_new)
        want = _explicit(kit.state(c, "float64"), c, *args, layout=layout)
        try:
            for (name, legend), u, e in zip(OUTPUTS, got, want):
                compare(u, e, name, legend, tol=kit.tolerance("float64"))
        except Fail as fail:
            raise Fail(t("{label}: {fail}; expected the explicit computation written head by head", label=c.label,
                         fail=fail), kit.name_mistake(args, got, case=c, outputs=OUTPUTS)) from None


@check("properties", "token-by-token decoding (caches fed back) equals the full causal forward at every step")
def decode_matches_full(kit):
    c = _DECODE
    layout = "deepseek" if kit.convention is not None else "half"
    x = torch.randn(c.B, c.T, c.D, generator=c.generator(), dtype=torch.float64)
    w = kit.state(c, "float64")
    want_out, want_c, want_k = _explicit(w, c, x, layout=layout)
    c_cache = k_rope_cache = None
    start = 0
    for step, size in enumerate(c.schedule):
        stop = start + size
        cache = t("no cache") if c_cache is None else t("{n} cached", n=start)
        where = t("{label}, step {step} (new positions {start}..{last}, {cache})", label=c.label, step=step,
                  start=start, last=stop - 1, cache=cache)
        got = kit.user((x[:, start:stop], c_cache, k_rope_cache), init=init(c), state=w)
        if not (isinstance(got, (tuple, list)) and len(got) == 3):
            raise Fail(t("{where}: forward should return a tuple (out, c_kv, k_rope)", where=where))
        out, c_cache, k_rope_cache = got
        try:
            tol = kit.tolerance("float64")
            compare(out, want_out[:, start:stop], "out", "(B, T_new, D)", tol=tol)
            compare(c_cache, want_c[:, :stop], "c_kv", "(B, T, d_latent)", tol=tol)
            compare(k_rope_cache, want_k[:, :stop], "k_rope", "(B, T, d_rope)", tol=tol)
        except Fail as fail:
            raise Fail(t("{where}: {fail}; expected the full causal forward over positions 0..{last} at the new "
                         "positions, and caches holding the latent W_dkv x and the rotated RoPE key RoPE(W_kr x) of "
                         "positions 0..{last} in order", where=where, fail=fail, last=stop - 1)) from None
        start = stop
