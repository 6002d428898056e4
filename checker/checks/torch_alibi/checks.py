"""Hidden checks: ALiBi slopes, bias and attention.

TARGET (alibi_attention) goes through the standard checks; alibi_slopes and alibi_bias are
compared below with kit.user(args, target=...), each with its own named mistakes.
"""

import math

import torch

from checker.kit import Fail, Mistake, case, check, compare, expect_structure
from checker.lang import t

TARGET = "alibi_attention"
DEVICE = True  # the bias and the mask are built inside: they must follow q's device
BATCH_INDEPENDENT = True
OUTPUTS = [("output", "(B, H, T_q, d_v)")]

# Every dimension its own size. Head counts: powers of two (4, 8) and not (6, 12, 5), so the
# get_slopes rule matters; T_q < T_k (a cached decode step) in cases 2, 3 and 5, so the offset of the
# causal mask does.
CASES = [
    case(1, B=2, H=4, T_q=5, T_k=5, d_k=6, d_v=3),
    case(2, B=3, H=6, T_q=2, T_k=7, d_k=4, d_v=5),
    case(3, B=2, H=12, T_q=3, T_k=9, d_k=5, d_v=4),
    case(4, B=3, H=5, T_q=6, T_k=6, d_k=8, d_v=7),
    case(5, B=2, H=8, T_q=1, T_k=4, d_k=3, d_v=6),
]
TIMING = case(6, B=2, H=8, T_q=96, T_k=128, d_k=16, d_v=24)
_SLOPE_HEADS = [1, 2, 3, 4, 5, 6, 7, 8, 12, 15, 16, 20, 24, 28]
_BIAS_CASES = [case(21, H=4, T_q=5, T_k=5), case(22, H=6, T_q=3, T_k=8), case(23, H=3, T_q=1, T_k=6),
              case(24, H=12, T_q=4, T_k=7)]


def inputs(c, dtype):
    g = c.generator()
    dt = getattr(torch, dtype)
    q = torch.randn(c.B, c.H, c.T_q, c.d_k, generator=g, dtype=torch.float64).to(dt)
    k = torch.randn(c.B, c.H, c.T_k, c.d_k, generator=g, dtype=torch.float64).to(dt)
    v = torch.randn(c.B, c.H, c.T_k, c.d_v, generator=g, dtype=torch.float64).to(dt)
    return q, k, v


# ----------------------------------------------------------------------------- named mistakes


def geometric(n, *, first_one=False):
    """The slopes of n heads (n a power of two), 2^(-8(h+1)/n); first_one: 2^(-8h/n)."""
    h = torch.arange(n, dtype=torch.float64) + (0 if first_one else 1)
    return 2.0 ** (-8.0 * h / n)


def slopes(H, *, rule="get_slopes", first_one=False, reverse=False, pick="even", as_float32=False, extra_first=False):
    """The slopes with knobs; every knob at its default is the authors' get_slopes."""
    if rule == "formula":  # 2^(-8(h+1)/H) for every H, power of two or not
        s = geometric(H, first_one=first_one)
    else:
        n = 2 ** math.floor(math.log2(H))
        extra = geometric(2 * n, first_one=first_one)
        extra = {"even": extra[0::2], "odd": extra[1::2], "first": extra}[pick][: H - n]
        s = torch.cat([extra, geometric(n, first_one=first_one)] if extra_first else [geometric(n, first_one=first_one), extra])
    s = s.flip(0) if reverse else s
    return s.float() if as_float32 else s


_SLOPE_MISTAKES = [
    Mistake("first slope 1", lambda H: slopes(H, first_one=True),
            "your slopes start at 2^0 = 1: the paper's sequence is 2^(-8(h+1)/H) for h = 0 .. H-1, so 8 heads give "
            "1/2, 1/4, ..., 1/256 (the first slope is 2^(-8/H))"),
    Mistake("formula for every H", lambda H: slopes(H, rule="formula"),
            "for a head count that is not a power of two your slopes are 2^(-8(h+1)/H): the authors' get_slopes "
            "takes the slopes of the largest power of two H' < H, then the even-indexed ([0::2]) slopes of 2H' heads"),
    Mistake("odd-indexed extra slopes", lambda H: slopes(H, pick="odd"),
            "your extra slopes (beyond the largest power of two H') are the ODD-indexed slopes of 2H' heads, which "
            "repeat slopes you already have: take the even-indexed ones, [0::2] (2^-0.5, 2^-1.5, ... for H' = 8)"),
    Mistake("first extra slopes", lambda H: slopes(H, pick="first"),
            "your extra slopes are the first H - H' slopes of 2H' heads: take every other one, [0::2][:H - H']"),
    Mistake("extra slopes first", lambda H: slopes(H, extra_first=True),
            "for a number of heads that is not a power of two your extra slopes come first: get_slopes appends "
            "them after the n slopes of the largest power of two, torch.cat([slopes, extra])"),
    Mistake("reversed", lambda H: slopes(H, reverse=True),
            "your slopes are in reverse order: head 0 has the LARGEST slope, 2^(-8/H)"),
    Mistake("float32", lambda H: slopes(H, as_float32=True),
            "your slopes are float32: return torch.float64 (dtype=torch.float64)"),
]


def bias(H, T_q, T_k, *, sign=-1.0, offset=True, symmetric=False, rule=None):
    """The (H, T_q, T_k) bias with knobs; every knob at its default is right."""
    i = torch.arange(T_q, dtype=torch.float64) + (T_k - T_q if offset else 0)
    j = torch.arange(T_k, dtype=torch.float64)
    distance = i[:, None] - j[None, :]
    distance = distance.abs() if symmetric else distance
    m = slopes(H) if rule is None else slopes(H, **rule)
    return sign * m[:, None, None] * distance


_BIAS_MISTAKES = [
    Mistake("sign flipped", lambda H, T_q, T_k: bias(H, T_q, T_k, sign=1.0),
            "your bias has the wrong sign: distant keys must be PENALISED, bias = -m_h · (i' - j) <= 0 for past keys"),
    Mistake("no query offset", lambda H, T_q, T_k: bias(H, T_q, T_k, offset=False),
            "your bias uses i - j with i counted from 0: the T_q queries are the LAST T_q positions, query i is at "
            "i' = i + T_k - T_q, so bias = -m_h · (i + T_k - T_q - j)"),
    Mistake("symmetric", lambda H, T_q, T_k: bias(H, T_q, T_k, symmetric=True),
            "your bias is -m_h · |i' - j|: right for past keys, but the contract's value for a future key is "
            "m_h · (j - i') > 0 (a plain -m_h · (i' - j), no abs); attention masks those keys anyway"),
    Mistake("first slope 1", lambda H, T_q, T_k: bias(H, T_q, T_k, rule={"first_one": True}),
            "your bias uses slopes starting at 1: m_h = 2^(-8(h+1)/H), the first one is 2^(-8/H)"),
    Mistake("formula for every H", lambda H, T_q, T_k: bias(H, T_q, T_k, rule={"rule": "formula"}),
            "your bias uses 2^(-8(h+1)/H) for a head count that is not a power of two: use alibi_slopes' get_slopes rule"),
]


def attend(q, k, v, *, slope_rule=None, bias_sign=-1.0, where="scores", scale=True, causal="offset"):
    """ALiBi attention with knobs; every knob at its default gives the right answer.

    No "bias without the query offset" knob: that bias differs from the right one by -m_h · (T_k - T_q),
    the same for every key of a row, and softmax ignores a constant added to a row. The offset
    matters in alibi_bias (its values are the contract) and in the causal mask, not here.
    """
    _, H, T_q, d_k = q.shape
    T_k = k.size(-2)
    b = bias(H, T_q, T_k, sign=bias_sign, rule=slope_rule).to(q)
    scores = q @ k.transpose(-2, -1)
    if where == "scores":
        scores = scores / math.sqrt(d_k) + b if scale else scores + b
    elif where == "before scale":
        scores = (scores + b) / math.sqrt(d_k)
    else:  # "after softmax": only scaled here, the bias comes later
        scores = scores / math.sqrt(d_k)
    visible = {"offset": torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q),
               "top-left": torch.ones(T_q, T_k, dtype=torch.bool).tril(),
               "diagonal hidden": torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q - 1),
               "none": torch.ones(T_q, T_k, dtype=torch.bool)}[causal]
    weights = scores.masked_fill(~visible, float("-inf")).softmax(dim=-1)
    weights = weights if causal == "diagonal hidden" else weights.nan_to_num(0.0)  # its first query sees nothing: NaN
    if where == "after softmax":
        weights = (weights + b).masked_fill(~visible, 0.0)
    return weights @ v


def _variant(**knobs):
    return lambda q, k, v: attend(q, k, v, **knobs)


MISTAKES = [
    Mistake("first slope 1", _variant(slope_rule={"first_one": True}),
            "your output equals ALiBi with slopes 2^(-8h/H) (the first one 1): m_h = 2^(-8(h+1)/H), h from 0"),
    Mistake("formula for every H", _variant(slope_rule={"rule": "formula"}),
            "your output equals ALiBi with 2^(-8(h+1)/H) slopes for a head count that is not a power of two: "
            "use the get_slopes rule (the slopes of the largest power of two H', then [0::2] of 2H')"),
    Mistake("sign flipped", _variant(bias_sign=1.0),
            "your output equals ALiBi with the bias sign flipped (distant keys favoured): add -m_h · (i' - j)"),
    Mistake("bias after softmax", _variant(where="after softmax"),
            "your output equals attention with the bias added to the weights after softmax: add it to the scores, "
            "before softmax"),
    Mistake("bias scaled too", _variant(where="before scale"),
            "your output equals (q kᵀ + bias) / √d_k: only q kᵀ is scaled, the bias is added after the scaling"),
    Mistake("missing scale", _variant(scale=False),
            "your output equals ALiBi attention without the 1/√d_k scale: q kᵀ / √d_k + bias"),
    Mistake("causal mask hides the diagonal", _variant(causal="diagonal hidden"),
            "your causal mask hides the diagonal too (tril(T_k - T_q - 1), or triu without the +1): a query sees "
            "its own key, keep tril(T_k - T_q)"),
    Mistake("not causal", _variant(causal="none"),
            "your output equals ALiBi without the causal mask: hide the future keys (j > i + T_k - T_q); "
            "the bias alone does not"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "alibi_slopes(num_heads), alibi_bias(num_heads, T_q, T_k) and alibi_attention(q, k, v) exist")
def structure(kit):
    expect_structure(kit, "alibi_slopes", module=False, params=["num_heads"])
    expect_structure(kit, "alibi_bias", module=False, params=["num_heads", "T_q", "T_k"])
    expect_structure(kit, TARGET, module=False, params=["q", "k", "v"])


def _verify(kit, target, args, what, legend, mistakes):
    got = kit.user(args, target=target)
    want = kit.reference(args, target=target)
    try:
        compare(got, want, what, legend)
    except Fail as fail:
        found = kit.name_mistake(args, got, mistakes)
        raise Fail(fail.message, found or fail.diagnosis) from None




@check("numerics", "alibi_slopes(H) is the paper's geometric sequence, extended by get_slopes' rule for other H")
def slopes_exact(kit):
    for H in _SLOPE_HEADS:
        _verify(kit, "alibi_slopes", (H,), f"alibi_slopes({H})", "(H,)", _SLOPE_MISTAKES)


@check("numerics", "alibi_bias(H, T_q, T_k)[h, i, j] = -m_h · (i + T_k - T_q - j)")
def bias_exact(kit):
    for c in _BIAS_CASES:
        _verify(kit, "alibi_bias", (c.H, c.T_q, c.T_k), f"alibi_bias({c.H}, T_q={c.T_q}, T_k={c.T_k})",
                "(H, T_q, T_k)", _BIAS_MISTAKES)


@check("masking", "query i uses no key after its own position i + T_k - T_q")
def causal(kit):
    c = CASES[2]
    q, k, v = inputs(c, "float64")
    before = kit.user((q, k, v))
    offset = c.T_k - c.T_q
    for pos in range(offset, c.T_k - 1):  # the own position of some query; change every key after it
        k2, v2 = k.clone(), v.clone()
        k2[:, :, pos + 1:] += 3.0
        v2[:, :, pos + 1:] += 10.0
        after = kit.user((q, k2, v2))
        i = pos - offset  # the query whose own position is pos
        if not isinstance(after, torch.Tensor) or after.shape != before.shape:
            raise Fail(t("{label}: the output should be a tensor of shape (B, H, T_q, d_v)", label=c.label))
        if not torch.equal(after[:, :, : i + 1], before[:, :, : i + 1]):
            raise Fail(t("{label}: changing the keys and values after position {pos} changed the output of query {i} "
                         "(absolute position {i} + T_k - T_q = {pos}): the future leaks. The bias does not hide future "
                         "keys: mask them, torch.ones(T_q, T_k).tril(T_k - T_q)", label=c.label, pos=pos, i=i))


@check("properties", "a decode step (the last T_q queries alone) equals the last T_q rows of the whole sequence")
def decode_step(kit):
    c = CASES[3]  # T_q == T_k: the whole sequence
    q, k, v = inputs(c, "float64")
    whole = kit.user((q, k, v))
    if not isinstance(whole, torch.Tensor) or whole.shape != (c.B, c.H, c.T_q, c.d_v):
        raise Fail(t("{label}: the output should be a tensor of shape (B, H, T_q, d_v)", label=c.label))
    for last in (1, 2):
        step = kit.user((q[:, :, -last:], k, v))
        try:
            what = (t("output for the last {n} query alone", n=last) if last == 1
                    else t("output for the last {n} queries alone", n=last))
            compare(step, whole[:, :, -last:], what, "(B, H, T_q, d_v)")
        except Fail as fail:
            raise Fail(t("{label}: {fail}. With T_q < T_k the queries are the LAST T_q positions: query i is at "
                         "i + T_k - T_q and sees the keys up to there, torch.ones(T_q, T_k).tril(T_k - T_q)",
                         label=c.label, fail=fail)) from None


@check("properties", "ALiBi favours near keys: with equal q·k, a head's weights decay by e^(-m_h) per step back")
def decay(kit):
    H, T = 4, 6
    q = torch.zeros(1, H, T, 3, dtype=torch.float64)  # every score q·k is 0: only the bias is left
    k = torch.randn(1, H, T, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    v = torch.eye(T, dtype=torch.float64).expand(1, H, T, T)  # out = the weights themselves
    got = kit.user((q, k, v))
    m = slopes(H)
    last = torch.exp(-m[:, None] * torch.arange(T - 1, -1, -1, dtype=torch.float64))  # (H, T): the last query
    want = last / last.sum(-1, keepdim=True)
    if not isinstance(got, torch.Tensor) or got.shape != (1, H, T, T):
        raise Fail(t("with v = the identity the output should be a tensor of shape (1, {H}, {T}, {T})", H=H, T=T))
    try:
        compare(got[0, :, -1], want, t("the weights of the last query (q = 0, v = identity)"), "(H, T_k)")
    except Fail as fail:
        raise Fail(t("{fail}. With every q·k equal, head h must weigh key j in proportion to e^(-m_h · (i - j)), "
                     "m = {m}", fail=fail, m=[round(x, 4) for x in m.tolist()])) from None
