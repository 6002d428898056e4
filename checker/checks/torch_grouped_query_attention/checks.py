"""Hidden checks: grouped-query attention (GQA), with MQA (num_kv_heads = 1) and MHA (= num_heads) as its ends."""

import math

import torch
from torch import nn

from checker.checks.shared import attention as shared
from checker.checks.shared import masks
from checker.checks.shared.outputs import split
from checker.kit import (FLOAT32_INSIDE, expect_raises, Fail, Mistake, case, check, compare,
                         expect_structure, matches)
from checker.lang import t

TARGET = "GroupedQueryAttention"
DROPOUT = "weights"  # the constructor takes dropout: it acts in training only, on the attention weights
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
OUTPUTS = [("out", "(B, T, D)"), ("attn", "(B, H, T, T)")]
DEVICE = True  # a fill or a mask made inside must follow the inputs' device

# Every dimension its own size where the contract allows it (G = H when H_kv = 1, H_kv = H when
# G = 1), so a swapped or broadcast axis cannot pass by coincidence. Case 1 has no mask and a real
# grouping (H=12 query heads in H_kv=3 groups of G=4): tiling the kv heads (Tensor.repeat) instead
# of interleaving them is diagnosed there. Case 2 is MQA, case 3 is plain MHA.
CASES = [
    case(1, B=2, T=7, D=60, H=12, H_kv=3, G=4, d_k=5, mask="none"),
    case(2, B=3, T=6, D=20, H=4, H_kv=1, G=4, d_k=5, mask="causal (1, 1, T, T)"),
    case(3, B=4, T=5, D=6, H=3, H_kv=3, G=1, d_k=2, mask="padding (B, 1, 1, T)"),
    case(4, B=5, T=4, D=42, H=6, H_kv=2, G=3, d_k=7, mask="decoder (B, 1, T, T)"),
    case(5, B=3, T=5, D=48, H=8, H_kv=2, G=4, d_k=6, mask="per head (B, H, T, T)"),
]
# A query that sees no key at all: beyond the textbook answer (an unguarded -inf fill gives NaN there,
# -1e9 a uniform row), so a follow-up, held apart from the core cases.
_EMPTY_ROW = case(6, B=2, T=5, D=24, H=8, H_kv=4, G=2, d_k=3, mask="(B, 1, T, T), one query sees nothing")
SHOW_WEIGHTS = (1, 1)  # the causal case, the attn output: drawn when masking fails or on --show-weights
TIMING = case(7, B=4, T=64, D=128, H=16, H_kv=4, G=4, d_k=8, mask="causal (1, 1, T, T)")


CONVENTIONS = (shared.FLOAT32_SOFTMAX,)  # LLaMA's softmax(scores.float()).type_as(q)
# The property checks ask which head reads which, or whether GQA's ends are MHA and MQA: float32
# internals must not read as a wrong grouping (whether the numbers are precise is the numerics checks' job).
_SAME = FLOAT32_INSIDE


def init(c):
    return {"d_model": c.D, "num_heads": c.H, "num_kv_heads": c.H_kv, "dropout": 0.0}


def make_mask(c) -> torch.Tensor | None:
    kind = c.mask.split()[0]
    g = c.generator(salt=1)
    causal = masks.causal(c.T, c.T)
    if kind == "none":
        return None
    if kind == "causal":
        return causal.view(1, 1, c.T, c.T)
    # lengths 2..T, one batch item really has padding, one has none; drawn for the random kinds too (the stream)
    pad = masks.padding(g, c.B, c.T, shortest=2, one_full=True).view(c.B, 1, 1, c.T)
    if kind == "padding":
        return pad
    if kind == "decoder":
        return pad & causal  # (B, 1, T, T)
    if kind == "per":  # every query head its own random mask: the mask belongs to query heads, not kv heads
        mask = torch.rand(c.B, c.H, c.T, c.T, generator=g) < 0.5
        return mask | torch.eye(c.T, dtype=torch.bool)  # every query sees at least itself
    mask = (torch.rand(c.B, 1, c.T, c.T, generator=g) < 0.6) | torch.eye(c.T, dtype=torch.bool)
    mask[1, 0, 2] = False  # batch item 1, query 2 sees nothing
    return mask


def inputs(c, dtype):
    x = torch.randn(c.B, c.T, c.D, generator=c.generator(), dtype=torch.float64).to(getattr(torch, dtype))
    return x, make_mask(c)


# ----------------------------------------------------------------------------- named mistakes


class _Knobbed(nn.Module):
    """The reference with knobs; every knob at its default gives the right answer."""

    share, scale, split, combine, project_out, v_proj, axis, invert, use_mask, fill = (
        "interleave", "sqrt_dk", "transpose", "transpose", True, "W_v", -1, False, True, "-inf")

    def __init__(self, d_model, num_heads, num_kv_heads, dropout=0.0):
        super().__init__()
        self.H, self.H_kv, self.d_k = num_heads, num_kv_heads, d_model // num_heads
        self.W_q, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_k, self.W_v = (nn.Linear(d_model, num_kv_heads * self.d_k) for _ in range(2))

    def forward(self, x, mask=None):
        B, T, D = x.shape
        G = self.H // self.H_kv
        Q = self._split(self.W_q(x), self.H)
        K, V = self._split(self.W_k(x), self.H_kv), self._split(getattr(self, self.v_proj)(x), self.H_kv)
        if self.share == "interleave":
            K, V = K.repeat_interleave(G, dim=1), V.repeat_interleave(G, dim=1)
        else:  # tiled: kv heads 0, 1, .., H_kv-1, 0, 1, ..: query head h reads kv head h % H_kv
            K, V = K.repeat(1, G, 1, 1), V.repeat(1, G, 1, 1)
        d = {"sqrt_dk": math.sqrt(self.d_k), "none": 1.0, "sqrt_dmodel": math.sqrt(D),
             "sqrt_kv_width": math.sqrt(self.W_k.out_features)}[self.scale]
        scores = Q @ K.transpose(-2, -1) / d
        visible = None if mask is None or not self.use_mask else (~mask if self.invert else mask)
        if visible is not None and self.fill == "add":  # the bool mask added as if it were an additive float mask
            scores = scores + visible
        elif visible is not None:
            scores = scores.masked_fill(~visible, {"-inf": float("-inf"), "zero": 0.0}[self.fill])
        attn = scores.softmax(dim=self.axis)
        if visible is not None and self.fill == "-inf":
            attn = attn.masked_fill(~visible, 0.0)
        out = attn @ V  # (B, H, T, d_k)
        out = out.transpose(1, 2).reshape(B, T, D) if self.combine == "transpose" else out.reshape(B, T, D)
        return (self.W_o(out) if self.project_out else out), attn

    def _split(self, x, heads):
        B, T, _ = x.shape
        if self.split == "transpose":
            return x.view(B, T, heads, self.d_k).transpose(1, 2)
        return x.view(B, heads, T, self.d_k)  # the wrong way: heads made of whole rows


def _variant(**knobs):
    return type("Mistake", (_Knobbed,), knobs)


_REPEAT_EXPLAIN = (
    "your query head h reads kv head h % num_kv_heads (the kv heads are tiled: Tensor.repeat, or Q grouped as "
    "(B, G, H_kv, T, d_k)): query head h must read kv head h // G, G = num_heads // num_kv_heads; use "
    "K.repeat_interleave(G, dim=1) (LLaMA's repeat_kv), not K.repeat(1, G, 1, 1)")

MISTAKES = [
    Mistake("kv heads tiled with repeat", _variant(share="repeat"), _REPEAT_EXPLAIN),
    Mistake("missing scale", _variant(scale="none"),
            "your output equals attention without the 1/√d_k scale: divide the scores by math.sqrt(d_k), "
            "d_k = d_model // num_heads"),
    Mistake("scale by sqrt(kv width)", _variant(scale="sqrt_kv_width"),
            "your scores are divided by √(num_kv_heads · d_k), the width of W_k: the scale is 1/√d_k, the size "
            "of ONE head (d_model // num_heads)"),
    Mistake("split without transpose", _variant(split="view"),
            "your heads are split with x.view(B, heads, T, d_k) directly, which cuts the sequence into blocks instead "
            "of cutting each vector into heads: use x.view(B, T, heads, d_k).transpose(1, 2)"),
    Mistake("missing output projection", _variant(project_out=False),
            "your output equals the concatenated heads without the output projection: apply self.W_o at the end"),
    Mistake("mask inverted", _variant(invert=True),
            "your mask is inverted: True means 'may attend', so hide the positions where mask is False (~mask)"),
    Mistake("mask ignored", _variant(use_mask=False),
            "your output equals attention without the mask: fill the hidden scores with -inf before the softmax"),
    Mistake("bool mask added", _variant(fill="add"),
            "your scores have the bool mask added to them (True counts as 1, False as 0), so a hidden key keeps its "
            "score: fill the hidden scores with -inf, scores.masked_fill(~mask, float('-inf'))"),
    Mistake("hidden scores set to 0", _variant(fill="zero"),
            "your hidden scores are set to 0 (a fill or a product with the mask), and exp(0) = 1 still gives them "
            "weight: fill them with -inf before the softmax, scores.masked_fill(~mask, float('-inf'))"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "GroupedQueryAttention is an nn.Module with W_q, W_k, W_v (num_kv_heads·d_k wide), W_o "
                    "and forward(x, mask)")
def structure(kit):
    c = CASES[0]
    try:
        expect_structure(kit, TARGET, module=True, params=["d_model", "num_heads", "num_kv_heads", "dropout"],
                         forward=["x", "mask"], init=init(c))
    except Fail as fail:
        params = kit.inspect(TARGET, init(c))["parameters"]
        if [c.D, c.D] not in (params.get("W_k.weight"), params.get("W_v.weight")):
            raise
        raise Fail(fail.message, t("your W_k and W_v are d_model wide, as in multi-head attention: they project to "
                                   "num_kv_heads · d_k with d_k = d_model // num_heads, the size of one query head: "
                                   "nn.Linear(d_model, num_kv_heads * d_k)")) from None
    for c in CASES[1:3]:  # MQA and MHA: d_k and the kv width are not hard-coded
        expect_structure(kit, TARGET, module=True, init=init(c))


@check("properties", "sizes that do not divide raise ValueError when the module is built")
def bad_sizes(kit):
    attempts = []
    for settings in ({"d_model": 12, "num_heads": 6, "num_kv_heads": 4}, {"d_model": 12, "num_heads": 4, "num_kv_heads": 3},
                     {"d_model": 10, "num_heads": 4, "num_kv_heads": 2}):
        call = f"GroupedQueryAttention({', '.join(f'{k}={v}' for k, v in settings.items())})"
        attempts.append((call, lambda settings=settings: kit.inspect(TARGET, {**settings, "dropout": 0.0})))
    expect_raises(attempts, t("a configuration whose heads do not divide builds a model that cannot be right: query "
                              "head h reads kv head h // (num_heads // num_kv_heads), which needs whole groups, and "
                              "d_k = d_model // num_heads must be whole"))


@check("masking", "hidden keys get exactly zero weight in every query head")
def hidden_keys_zero(kit):
    for c in CASES:
        args = kit.inputs(c)
        if args[1] is not None:
            _, attn = _pair(kit.user(args, case=c), c)
            shared.scores_returned(c, attn, _pair(kit.reference(args, case=c), c)[1], args[1], c.d_k, tol=_SAME,
                                   attn=True)
            shared.hidden_keys_get_zero(c, attn, args[1], t("; the mask belongs to the H query heads, apply it after "
                                                            "the kv heads are shared"))


@check("masking", "with a causal mask, position i uses no input after i")
def causal(kit):
    c = CASES[1]
    x, mask = kit.inputs(c)
    shared.no_future_leak(c, lambda x: _pair(kit.user((x, mask), case=c), c)[0], x)


@check("masking", "a query with no visible key gets zero weights (its output is W_o's bias)", followup=True)
def fully_hidden_row(kit):
    c = _EMPTY_ROW
    args = kit.inputs(c)
    out, attn = _pair(kit.user(args, case=c), c)
    shared.blind_query_gets_zero(c, out, attn, kit.reference(args, case=c)[0])


@check("masking", "scores near -57000 with a padding and causal mask: hidden keys still get zero weight in every "
                  "head", followup=True)
def very_negative_scores(kit):
    # GPT-2 fills hidden scores with -1e4: right while the scores stay far above it, wrong once they do not. The
    # contract says hidden keys get zero weight whatever the scores, so a miss is the interviewer's next question.
    c = CASES[3]  # padding and causal, real groups: every query sees at least key 0
    args = kit.inputs(c)
    if not matches(_pair(kit.user(args, case=c), c)[1], _pair(kit.reference(args, case=c), c)[1], _SAME):
        return  # wrong on ordinary scores already: the core checks say how, and the fill is not the question
    _, attn = _pair(kit.user(args, case=c, state=_scores_near_minus_57000(kit.state(c, "float64"), c)), c)
    shared.very_negative_verdict(c, attn, args[1])


def _scores_near_minus_57000(state, c):
    """The weights with feature 0 of every query head fixed at a and of every kv head at -a (those W_q and W_k rows
    zeroed, their biases set): every score is (-a² + a few) / √d_k, near -57000."""
    a = math.sqrt(57000.0 * math.sqrt(c.d_k))
    for name, heads, value in (("W_q", c.H, a), ("W_k", c.H_kv, -a)):
        rows = torch.arange(heads) * c.d_k
        state[f"{name}.weight"][rows] = 0.0
        state[f"{name}.bias"][rows] = value
    return state


@check("properties", "query head h reads kv head h // G (repeat_interleave, not repeat)")
def grouping(kit):
    rtol, atol = _SAME
    for c in (CASES[0], CASES[4]):  # real groups: G > 1 and H_kv > 1
        args = kit.inputs(c)
        _, attn = _pair(kit.user(args, case=c), c)
        candidates = _head_pairs(kit.state(c, "float64"), c, *args)  # (B, H, H_kv, T, T)
        read = []
        for h in range(c.H):
            found = [j for j in range(c.H_kv) if torch.allclose(attn[:, h], candidates[:, h, j], rtol=rtol, atol=atol)]
            read.append(found[0] if found else None)
        want = [h // c.G for h in range(c.H)]
        if None in read or read == want:
            continue  # a head that matches no kv head: the numerics checks say what is wrong
        if read == [h % c.H_kv for h in range(c.H)]:
            raise Fail(t("{label}: query heads 0..{last} read kv heads {read}, expected {want}: {why}", label=c.label,
                         last=c.H - 1, read=read, want=want, why=t(_REPEAT_EXPLAIN)))
        raise Fail(t("{label}: query heads 0..{last} read kv heads {read}, expected {want}: query head h reads kv head "
                     "h // G, G = num_heads // num_kv_heads (K.repeat_interleave(G, dim=1))", label=c.label,
                     last=c.H - 1, read=read, want=want))


@check("properties", "num_kv_heads == num_heads is the multi-head attention kata's reference, same weights")
def equals_mha(kit):
    from checker import catalogue

    c = CASES[2]
    assert c.H_kv == c.H
    args = kit.inputs(c)
    mha = catalogue.load_solution(catalogue.find("multi_head_attention")).MultiHeadAttention(c.D, c.H).double()
    mha.load_state_dict(kit.state(c, "float64"))
    with torch.no_grad():
        want_out, want_attn = mha.eval()(args[0], args[0], args[1])
    out, attn = _pair(kit.user(args, case=c), c)
    try:
        compare(attn, want_attn, "attn", "(B, H, T, T)", tol=_SAME)
        compare(out, want_out, "out", "(B, T, D)", tol=_SAME)
    except Fail as fail:
        raise Fail(t("{label}: with num_kv_heads == num_heads every query head has its own kv head and GQA is "
                     "ordinary multi-head attention, but your result differs from it: {fail}", label=c.label,
                     fail=fail)) from None


@check("properties", "num_kv_heads == 1 is multi-query attention: every head shares one K and one V")
def equals_mqa(kit):
    c = CASES[1]
    assert c.H_kv == 1
    x, mask = kit.inputs(c)
    w = kit.state(c, "float64")
    Q = (x @ w["W_q.weight"].T + w["W_q.bias"]).view(c.B, c.T, c.H, c.d_k)  # (B, T, H, d_k)
    K = x @ w["W_k.weight"].T + w["W_k.bias"]  # (B, T, d_k): one key per position, for every head
    V = x @ w["W_v.weight"].T + w["W_v.bias"]  # (B, T, d_k)
    scores = torch.einsum("bthd,bsd->bhts", Q, K) / math.sqrt(c.d_k)
    weights = scores.masked_fill(~mask, float("-inf")).softmax(-1)
    heads = torch.einsum("bhts,bsd->bthd", weights, V).reshape(c.B, c.T, c.D)
    want = heads @ w["W_o.weight"].T + w["W_o.bias"]
    out, attn = _pair(kit.user((x, mask), case=c), c)
    try:
        compare(attn, weights, "attn", "(B, H, T, T)", tol=_SAME)
        compare(out, want, "out", "(B, T, D)", tol=_SAME)
    except Fail as fail:
        raise Fail(t("{label}: with num_kv_heads == 1 all {H} query heads share one key and one value head "
                     "(multi-query attention), but your result differs from it: {fail}", label=c.label, H=c.H,
                     fail=fail)) from None


def _head_pairs(w, c, x, mask):
    """(B, H, H_kv, T, T): the weights query head h would have if it read kv head j, for every (h, j)."""
    Q = (x @ w["W_q.weight"].T + w["W_q.bias"]).view(c.B, c.T, c.H, c.d_k)
    K = (x @ w["W_k.weight"].T + w["W_k.bias"]).view(c.B, c.T, c.H_kv, c.d_k)
    scores = torch.einsum("bthd,bsjd->bhjts", Q, K) / math.sqrt(c.d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask.expand(c.B, c.H, c.T, c.T)[:, :, None], float("-inf"))
    return scores.softmax(-1)


def _pair(value, c):
    return split(value, c, ("out", "attn"), out=((c.B, c.T, c.D), "(B, T, D)"),
                 attn=((c.B, c.H, c.T, c.T), "(B, H, T, T)"))
