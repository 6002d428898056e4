"""Hidden checks: linear attention (Katharopoulos et al. 2020), non-causal and causal.

The user's linear_attention also runs under a memory probe (checker/checks/torch_linear_attention/driver.py)
that records the largest tensor it creates: linear attention never forms a (T_q, T_k) matrix.
"""

import math

import torch
import torch.nn.functional as F

from checker.checks.torch_linear_attention.driver import linear_attention_memory
from checker.checks.shared import masks
from checker.kit import Convention, Fail, Mistake, as_outputs, case, check, compare, expect_structure
from checker.lang import t

TARGET = "linear_attention"
OUTPUTS = [("out", "(B, H, T_q, d_v)")]
BATCH_INDEPENDENT = True
DEVICE = True  # nothing is built inside in the reference; a mask or ones built by the user must follow q

# Every dimension its own size. Cases 1 and 4 are non-causal with T_q != T_k (more queries than keys
# in case 4); cases 2 and 3 are causal (T_q == T_k).
CASES = [
    case(1, B=2, H=3, T_q=5, T_k=7, d_k=4, d_v=6, causal=False),
    case(2, B=3, H=2, T_q=8, T_k=8, d_k=5, d_v=3, causal=True),
    case(3, B=2, H=4, T_q=6, T_k=6, d_k=3, d_v=7, causal=True),
    case(4, B=3, H=2, T_q=9, T_k=4, d_k=6, d_v=5, causal=False),
]
TIMING = case(5, B=2, H=4, T_q=128, T_k=128, d_k=16, d_v=24, causal=True)
# The memory cases: B·H = 2 and T (61, 53, 59) far above d_k·d_v (12), so one head's (T_q, T_k)
# matrix (2809 .. 3721 elements) is more than twice the bound B·H·max(T_q, T_k)·d_k·d_v (1416 .. 1464),
# and T_q, T_k are unlike every other size (a tensor with both axes is a matrix of scores).
_MEMORY_CASES = [
    case(6, B=1, H=2, T_q=61, T_k=61, d_k=3, d_v=4, causal=True),
    case(7, B=2, H=1, T_q=53, T_k=59, d_k=4, d_v=3, causal=False),
]


def inputs(c, dtype):
    g = c.generator()
    dt = getattr(torch, dtype)
    q = torch.randn(c.B, c.H, c.T_q, c.d_k, generator=g, dtype=torch.float64).to(dt)
    k = torch.randn(c.B, c.H, c.T_k, c.d_k, generator=g, dtype=torch.float64).to(dt)
    v = torch.randn(c.B, c.H, c.T_k, c.d_v, generator=g, dtype=torch.float64).to(dt)
    return q, k, v, c.causal


def bound(c) -> int:
    return c.B * c.H * max(c.T_q, c.T_k) * c.d_k * c.d_v


# ----------------------------------------------------------------------------- named mistakes

_MAPS = {"elu+1": lambda x: F.elu(x) + 1, "relu": F.relu, "none": lambda x: x, "elu": F.elu,
         "exp": torch.exp}


def kernelised(q, k, v, causal=False, *, fmap="elu+1", normalise=True, prefix="inclusive", scale=False,
               softmax=False, eps=0.0, z_keys="phi"):
    """Linear attention with knobs, written in its quadratic form (the same numbers up to rounding);
    every knob at its default gives the right answer."""
    if scale:
        q = q / math.sqrt(q.size(-1))
    if softmax:
        scores = q @ k.mT / math.sqrt(q.size(-1))
        if causal:
            T = q.size(-2)
            scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
        return scores.softmax(dim=-1) @ v
    phi = _MAPS[fmap]
    weights = phi(q) @ phi(k).mT  # (B, H, T_q, T_k)
    if causal and prefix != "ignored":
        T = q.size(-2)
        visible = torch.ones(T, T, dtype=torch.bool).tril(-1 if prefix == "exclusive" else 0)
        weights = weights.masked_fill(~visible, 0.0)
    if not normalise:
        return weights @ v
    if z_keys == "raw":  # z = sum_j k_j, the keys before the feature map: phi(q) · z in the denominator
        den = phi(q) @ k.mT
        if causal and prefix != "ignored":
            den = den.tril()
        return (weights @ v) / den.sum(dim=-1, keepdim=True)
    return (weights @ v) / (weights.sum(dim=-1, keepdim=True) + eps)


def _variant(**knobs):
    return lambda q, k, v, causal=False: kernelised(q, k, v, causal, **knobs)


MISTAKES = [
    Mistake("feature map relu", _variant(fmap="relu"),
            "your output equals linear attention with phi(x) = relu(x): the paper's feature map is elu(x) + 1, "
            "positive everywhere, so every key keeps a positive weight and the denominator never reaches 0 "
            "(relu zeroes whole rows: 0 / 0 = NaN)"),
    Mistake("no feature map", _variant(fmap="none"),
            "your output equals linear attention without a feature map, (q kᵀ) v / (q kᵀ) 1: the weights q·k can "
            "be negative and the denominator 0; apply phi(x) = elu(x) + 1 to q and k first"),
    Mistake("feature map exp", _variant(fmap="exp"),
            "your output equals linear attention with phi(x) = exp(x): this kata's feature map is elu(x) + 1"),
    Mistake("prefix sum excludes the query", _variant(prefix="exclusive"),
            "your causal output equals prefix sums over j < i: query i must see its own key too, S_i = sum_{j <= i} "
            "phi(k_j)ᵀ v_j (torch.cumsum is inclusive; a loop updates S before reading it). The first position then "
            "divides 0 by 0"),
    Mistake("normaliser from the raw keys", _variant(z_keys="raw"),
            "your normaliser sums the keys before the feature map, z = sum_j k_j: the numerator uses phi(k_j), so z "
            "must too, z = sum_j phi(k_j), or each query's weights do not sum to 1 (and the denominator can be 0)"),
    Mistake("scaled by 1/sqrt(d_k)", _variant(scale=True),
            "your output equals linear attention with q scaled by 1/√d_k before the feature map: softmax's "
            "temperature has no place here, phi(q) · phi(k) is used as it is"),
    Mistake("softmax attention", _variant(softmax=True),
            "your output equals softmax attention, softmax(q kᵀ / √d_k) v: linear attention replaces exp(q·k) by "
            "phi(q) · phi(k), phi(x) = elu(x) + 1, and never forms the (T_q, T_k) matrix"),
]

_FMAP_MISTAKES = [
    Mistake("feature map relu", _MAPS["relu"], "your feature map is relu(x): the paper's is elu(x) + 1, positive "
            "everywhere (relu(x) is 0 for x <= 0)"),
    Mistake("no feature map", _MAPS["none"], "your feature map returns x itself: phi(x) = elu(x) + 1"),
    Mistake("feature map elu without + 1", _MAPS["elu"], "your feature map is elu(x): add 1, phi(x) = elu(x) + 1, "
            "so it is positive everywhere"),
    Mistake("feature map exp", _MAPS["exp"], "your feature map is exp(x): this kata's is elu(x) + 1"),
]

# The paper's own code (idiap/fast-transformers, LinearAttention and CausalLinearAttention) adds eps=1e-6
# to the denominator: right, and accepted as the paper's convention. A causal denominator at the first
# positions is a single phi(q_0) · phi(k_0), as small as ~0.05 on these inputs, so eps moves the output by
# up to ~2e-5 relative there; once adopted, every later comparison (also with the quadratic form, which has
# no epsilon) allows 1e-4, while every named mistake moves the output by more than 1e-2.
_EPS_TOL = (1e-4, 1e-6)
CONVENTIONS = (
    Convention("eps in the denominator (fast-transformers)", (
        "your output equals phi(Q) S / (phi(Q) · z + 1e-6): the epsilon of the paper's code (fast-transformers' "
        "LinearAttention, eps=1e-6). phi = elu + 1 is positive, so the denominator cannot be 0 and this kata's "
        "reference adds no epsilon; the epsilon was allowed for every later check"),
        impl=_variant(eps=1e-6), tol=_EPS_TOL),
)


# ----------------------------------------------------------------------------- checks


@check("structure", "feature_map(x) and linear_attention(q, k, v, causal) exist")
def structure(kit):
    expect_structure(kit, "feature_map", module=False, params=["x"])
    expect_structure(kit, TARGET, module=False, params=["q", "k", "v", "causal"])


@check("numerics", "feature_map(x) = elu(x) + 1, positive everywhere")
def feature(kit):
    x = torch.linspace(-6, 4, 41, dtype=torch.float64).view(1, 41)  # (1, 41): negative, zero and positive
    got = kit.user((x,), target="feature_map")
    try:
        compare(got, F.elu(x) + 1, "feature_map(x)", "(...)")
    except Fail as fail:
        raise Fail(fail.message, kit.name_mistake((x,), got, _FMAP_MISTAKES, run=lambda m: m.impl(x))) from None


def _quadratic(q, k, v, causal):
    """The quadratic form with the same feature map: the (T_q, T_k) kernel weights, normalised by row."""
    weights = (F.elu(q) + 1) @ (F.elu(k) + 1).mT  # (B, H, T_q, d_k) x (B, H, d_k, T_k) -> (B, H, T_q, T_k)
    if causal:
        weights = weights.tril()  # keys j <= i
    return weights / weights.sum(dim=-1, keepdim=True) @ v  # (B, H, T_q, T_k) x (B, H, T_k, d_v)


@check("properties", "equals the quadratic form with the same feature map: (phi(Q) phi(K)ᵀ, row-normalised) V")
def quadratic_form(kit):
    for c in CASES:
        args = inputs(c, "float64")
        got = _out(kit.user(args), c)
        try:
            compare(got, _quadratic(*args), t("{label}: out", label=c.label), "(B, H, T_q, d_v)", tol=kit.tolerance("float64"))
        except Fail as fail:
            raise Fail(t("{fail}; expected the weights phi(q_i) · phi(k_j) / sum_j phi(q_i) · phi(k_j){causal} "
                         "applied to v", fail=fail, causal=t(" over j <= i") if c.causal else ""),
                       kit.name_mistake(args, got)) from None


@check("masking", "causal: query i uses no key or value after position i")
def causal_future(kit):
    c = CASES[1]
    q, k, v, _ = inputs(c, "float64")
    before = _out(kit.user((q, k, v, True)), c)
    leak = masks.future_leak(lambda k, v: _out(kit.user((q, k, v, True)), c), (k, v), (3.0, 10.0), axis=2,
                             before=before, same=lambda before, after: torch.allclose(
                                 after, before, rtol=1e-12, atol=1e-12, equal_nan=True))
    if leak:
        raise Fail(t("{label}: changing the keys and values after position {pos} changed the output at positions "
                     "<= {pos}: the future leaks. With causal=True, S_i and z_i are prefix sums over j <= i "
                     "(torch.cumsum over the positions, or a loop that carries S and z)", label=c.label, pos=leak.pos),
                   kit.name_mistake((q, k, v, True), before))


@check("masking", "causal: query i uses every key up to i (the prefix sums run over the positions)")
def causal_past(kit):
    c = CASES[1]
    q, k, v, _ = inputs(c, "float64")
    before = _out(kit.user((q, k, v, True)), c)
    k2, v2 = k.clone(), v.clone()
    k2[:, :, 0] += 3.0
    v2[:, :, 0] += 10.0
    after = _out(kit.user((q, k2, v2, True)), c)
    for pos in range(c.T_q):
        if torch.allclose(after[:, :, pos], before[:, :, pos], rtol=1e-12, atol=1e-12, equal_nan=True):
            raise Fail(t("{label}: changing the key and value at position 0 left the output at position {pos} "
                         "unchanged: with causal=True query i sees every key 0..i", label=c.label, pos=pos),
                       kit.name_mistake((q, k, v, True), before) or (
                           t("query 0 does not see key 0, its own position: the prefix sums include position i "
                             "itself (j <= i), so a loop adds phi(k_i)ᵀ v_i to S and phi(k_i) to z before query i "
                             "reads them") if pos == 0 else
                           t("query {pos} does not see key 0: S_i and z_i sum over every position j <= i, "
                             "torch.cumsum(..., dim=2) on (B, H, T, ...), not over a feature axis or a window",
                             pos=pos)))


@check("properties", "causal: the first t positions alone give the first t outputs (the RNN view)")
def prefix(kit):
    c = CASES[2]
    q, k, v, _ = inputs(c, "float64")
    whole = _out(kit.user((q, k, v, True)), c)
    for n in (1, 4):
        part = kit.user((q[:, :, :n], k[:, :, :n], v[:, :, :n], True))
        try:
            compare(part, whole[:, :, :n], t("{label}: out of the first {n} positions alone", label=c.label, n=n),
                    "(B, H, T, d_v)", tol=kit.tolerance("float64"))
        except Fail as fail:
            raise Fail(t("{fail}: causal linear attention is an RNN, the state (S_i, z_i) after position i depends "
                         "on positions 0..i only", fail=fail)) from None


@check("properties", "defaults: causal=False when not given")
def defaults(kit):
    c = CASES[0]
    q, k, v, _ = inputs(c, "float64")
    # Judged against the user's own causal=False call: a wrong value elsewhere fails numerics, not this.
    compare(kit.user((q, k, v)), kit.user((q, k, v, False)), t("{label}, linear_attention(q, k, v): out against "
                                                               "linear_attention(q, k, v, False)", label=c.label),
            "(B, H, T_q, d_v)", tol=kit.tolerance("float64"))


@check("properties", "memory: no tensor larger than B·H·max(T_q, T_k)·d_k·d_v elements, no (T_q, T_k) matrix")
def memory(kit):
    for c in _MEMORY_CASES:
        reply = kit.drive(linear_attention_memory, *inputs(c, "float64"))
        if reply["fused"]:
            raise Fail(t("{label}: your code ran the fused attention kernel {kernel}: that is softmax attention, "
                         "quadratic in T", label=c.label, kernel=reply["fused"][0]))
        _out(reply["out"], c)  # the values are judged by the numerics checks
        if reply["square"]:
            op, shape = reply["square"]
            raise Fail(t("{label}: your code made a tensor of shape {shape} ({op}) with an axis of T_q = {T_q} and "
                         "one of T_k = {T_k}: a matrix of query-key weights, which is what linear attention avoids",
                         label=c.label, shape=tuple(shape), op=op, T_q=c.T_q, T_k=c.T_k),
                       t("sum over the keys first, S = phi(K)ᵀ V (d_k, d_v) and z = sum of phi(K), then "
                         "phi(Q) S / (phi(Q) · z); causal: prefix sums of phi(k_j)ᵀ v_j"))
        if reply["largest"] > bound(c):
            raise Fail(t("{label}: your code created a tensor of {largest} elements ({op} returned shape {shape}), more "
                         "than the bound B·H·max(T_q, T_k)·d_k·d_v = {limit}: memory must grow linearly in T",
                         label=c.label, largest=reply["largest"], op=reply["op"], shape=tuple(reply["shape"]),
                         limit=bound(c)))


def _out(value, c):
    (out,) = as_outputs(value, OUTPUTS)
    want = (c.B, c.H, c.T_q, c.d_v)
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != want:
        got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise Fail(t("{label}: linear_attention should return out of shape (B, H, T_q, d_v) = {want}, got {got}",
                     label=c.label, want=want, got=got))
    return out
