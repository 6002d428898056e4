"""Hidden checks: the paper walkthrough's NumPy TransformerBlock (a class whose weights are plain attributes).

A NumPy class has no state_dict and no .to(dtype), so the standard checks (which build torch modules)
do not apply: this module defines no OUTPUTS and runs its own shape, numerics and hygiene checks.
Each call builds the user's block in the child, overwrites its weights by attribute path and calls
forward, through the driver checker.checks.child.numpy_classes.build_and_call.
"""

import math
import sys

import numpy as np
import torch

from checker.checks.child import numpy_classes
from checker.checks.shared import attention as shared
from checker.checks.shared import masks
from checker.lang import t
from checker.kit import Fail, FollowUp, Mistake, UserError, calls_per_part, case, check, compare, expect_structure, matches

TARGET = "TransformerBlock"
LOAD_STATE = False  # the weights are assigned by attribute path, not loaded from a state_dict
# The given objects whose forward the block calls: when the numbers differ, the first whose input differs is named.
PARTS = ("attention", "norm1", "ff", "norm2")

# Every dimension its own size (B, T, D, H, d_k = D // H, d_ff). Cases 1 and 3 use the paper walkthrough's
# single sequence (T, D); 2 and 4 a batch (B, T, D).
CASES = [
    case(1, T=5, D=12, H=3, d_ff=20, mask="none"),
    case(2, B=2, T=6, D=8, H=2, d_ff=10, mask="padding (B, 1, 1, T)"),
    case(3, T=7, D=15, H=5, d_ff=9, mask="causal (T, T)"),
    case(4, B=3, T=4, D=10, H=2, d_ff=6, mask="causal and padding (B, 1, T, T)"),
]
# Batch item 1 all PAD, so its queries see no key: beyond the textbook answer (the paper walkthrough's additive -1e9
# lets such a row attend as if unmasked, -inf alone gives NaN), so a follow-up, held apart.
_BLIND = case(5, B=3, T=4, D=10, H=2, d_ff=6, mask="causal and padding (B, 1, T, T), batch item 1 all PAD")


def init(c):
    return {"d_model": c.D, "num_heads": c.H, "d_ff": c.d_ff}


def shapes(c) -> dict:
    """The attributes the checker overwrites, and their shapes."""
    D, F = c.D, c.d_ff
    return {"attention.W_q": (D, D), "attention.W_k": (D, D), "attention.W_v": (D, D), "attention.W_o": (D, D),
            "norm1.gamma": (D,), "norm1.beta": (D,),
            "ff.W1": (D, F), "ff.b1": (F,), "ff.W2": (F, D), "ff.b2": (D,),
            "norm2.gamma": (D,), "norm2.beta": (D,)}


def weights(c, dtype) -> dict:
    g = c.generator(salt=17)
    scale = {"attention": c.D ** -0.5, "ff.W1": c.D ** -0.5, "ff.W2": c.d_ff ** -0.5}
    out = {}
    for name, shape in shapes(c).items():
        w = torch.randn(*shape, generator=g, dtype=torch.float64)
        if name.endswith("gamma"):
            w = 1.0 + 0.5 * w  # away from (1, 0), so gamma, beta and the two norms cannot be confused
        elif name.endswith(("beta", "b1", "b2")):
            w = 0.5 * w
        else:
            w = w * scale[name.split(".")[0] if name.startswith("attention") else name]
        out[name] = w.numpy().astype(dtype)
    return out


def _lead(c) -> tuple:
    return (c.B,) if "B" in c.dims else ()


def make_mask(c):
    kind = c.mask.split()[0]
    if kind == "none":
        return None
    causal = np.tril(np.ones((c.T, c.T), dtype=bool))
    if kind == "causal" and "padding" not in c.mask:
        return causal  # (T, T), as the paper walkthrough's create_causal_mask (inverted: True = visible)
    lengths = masks.pad_lengths(c.generator(salt=1), c.B, c.T)  # 1..T, batch item 0's T - 2
    if "all PAD" in c.mask:
        lengths[1] = 0
    real = (torch.arange(c.T) < lengths[:, None]).numpy()  # (B, T)
    if kind == "padding":
        return real[:, None, None, :]  # (B, 1, 1, T)
    return causal[None, None] & real[:, None, None, :]  # (B, 1, T, T)


def inputs(c, dtype="float64"):
    g = c.generator()
    x = torch.randn(*_lead(c), c.T, c.D, generator=g, dtype=torch.float64).numpy().astype(dtype)
    return x, make_mask(c)


# ----------------------------------------------------------------------------- calling the block


def user_block(kit, c, dtype="float64", x=None, mask="case", *, part="", what="forward", raw=False):
    """The user's block for case c, weights assigned, forward(x, mask) (or part.forward(x)) called in the child."""
    case_x, case_mask = inputs(c, dtype)
    x = case_x if x is None else x
    args = (x,) if part else (x, case_mask if isinstance(mask, str) else mask)
    reply = kit.drive(numpy_classes.build_and_call, TARGET, init(c), weights(c, dtype), args, "forward", part)
    if "missing" in reply:
        raise Fail(t("{label}: after TransformerBlock(**{init}) there is no {names}: the checker overwrites the weights "
                     "under the names in the docstring (attention, norm1, ff, norm2 built from the given classes)",
                     label=c.label, init=init(c), names=', '.join('block.' + n for n in reply['missing'])))
    if raw:
        return reply
    out = reply["output"]
    if not isinstance(out, np.ndarray) or out.shape != x.shape:
        shape = out.shape if isinstance(out, np.ndarray) else t("a {kind}", kind=type(out).__name__)
        raise Fail(t("{label}: {what} should return a NumPy array of x's shape {want}, got {got}", label=c.label,
                     what=what, want=x.shape, got=shape))
    return out


def reference_block(kit, c, dtype="float64", x=None, mask="case", *, impl=None):
    case_x, case_mask = inputs(c, dtype)
    x = case_x if x is None else x
    mask = case_mask if isinstance(mask, str) else mask
    if impl is not None:
        return impl(weights(c, dtype), c.H, x, mask)
    block = kit.solution.TransformerBlock(**init(c))
    for name, value in weights(c, dtype).items():
        numpy_classes.set_path(block, name, value.copy())
    return block.forward(x, mask)


# ----------------------------------------------------------------------------- named mistakes


def _norm(x, gamma, beta, eps=1e-6, *, std_plus_eps=False, ddof=0):
    mean = x.mean(axis=-1, keepdims=True)
    std = x.std(axis=-1, keepdims=True, ddof=ddof)
    return gamma * (x - mean) / ((std + eps) if std_plus_eps else np.sqrt(std**2 + eps)) + beta


def _attention(w, H, x, mask):
    def heads(a):
        a = a.reshape(*a.shape[:-1], H, -1)
        return np.swapaxes(a, -2, -3)

    Q, K, V = heads(x @ w["attention.W_q"]), heads(x @ w["attention.W_k"]), heads(x @ w["attention.W_v"])
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        p = np.exp(scores - scores.max(axis=-1, keepdims=True))
        p = p / p.sum(axis=-1, keepdims=True)
    if mask is not None:
        p = np.where(mask, p, 0.0)
    out = np.swapaxes(p @ V, -2, -3)
    return out.reshape(*out.shape[:-2], -1) @ w["attention.W_o"]


def _ff(w, x):
    return np.maximum(0, x @ w["ff.W1"] + w["ff.b1"]) @ w["ff.W2"] + w["ff.b2"]


def block(w, H, x, mask, *, wiring="right", mask_as="visible", **norm_knobs):
    """The block with knobs; every knob at its default gives the right answer."""
    if mask is not None and mask_as != "visible":
        mask = None if mask_as == "ignored" else ~mask
    n1, n2 = ("norm1", "norm2") if wiring != "norms swapped" else ("norm2", "norm1")

    def norm(which, a):
        return _norm(a, w[f"{which}.gamma"], w[f"{which}.beta"], **norm_knobs)

    if wiring == "pre_norm":
        h = x + _attention(w, H, norm(n1, x), mask)
        return h + _ff(w, norm(n2, h))
    attn = _attention(w, H, x, mask)
    h = norm(n1, attn if wiring == "no residual 1" else x + attn)
    ff = _ff(w, x if wiring == "ff on the input" else h)
    return norm(n2, ff if wiring == "no residual 2" else (x if wiring == "residual 2 from the input" else h) + ff)


def _variant(**knobs):
    return lambda w, H, x, mask: block(w, H, x, mask, **knobs)


MISTAKES = [
    Mistake("the paper walkthrough's LayerNorm", _variant(std_plus_eps=True),
            "your output equals the block with the paper walkthrough's LayerNorm, (x - mean) / (std + eps): this kata puts eps "
            "inside the square root, (x - mean) / np.sqrt(var + eps)"),
    Mistake("unbiased std", _variant(std_plus_eps=True, ddof=1),
            "your LayerNorm divides by the unbiased std + eps (ddof=1, the Annotated Transformer's): use the biased "
            "variance and np.sqrt(var + eps)"),
    Mistake("unbiased variance", _variant(ddof=1),
            "your LayerNorm uses the unbiased variance (ddof=1): divide by D, np.var's default"),
    Mistake("default eps 1e-5", _variant(eps=1e-5),
            "your LayerNorm's eps is 1e-5 (nn.LayerNorm's default): the paper walkthrough's is 1e-6, the contract's too"),
    Mistake("missing attention residual", _variant(wiring="no residual 1"),
            "your output equals norm1(attention(x)) without the residual: x = norm1.forward(x + attn_output)"),
    Mistake("missing FFN residual", _variant(wiring="no residual 2"),
            "your output equals norm2(ff(x)) without the residual: return norm2.forward(x + ff_output)"),
    Mistake("second residual from the input", _variant(wiring="residual 2 from the input"),
            "your second residual adds the block's input instead of the normalised x: in the paper walkthrough, x is reassigned "
            "to norm1's output, and x + ff_output uses that x"),
    Mistake("FFN fed with the input", _variant(wiring="ff on the input"),
            "your FFN reads the block's input instead of norm1's output: ff.forward(x) after x = norm1.forward(...)"),
    Mistake("pre-norm", _variant(wiring="pre_norm"),
            "your output equals the pre-norm block, x + attention(norm1(x)) then x + ff(norm2(x)): the paper walkthrough (and this "
            "kata) is post-norm, x = norm1(x + attention(x)), then norm2(x + ff(x))"),
    Mistake("norms swapped", _variant(wiring="norms swapped"),
            "you use norm2 after the attention and norm1 after the FFN: norm1 follows the attention"),
    Mistake("mask ignored", _variant(mask_as="ignored"),
            "your output equals the block without the mask: pass mask to self.attention.forward(x, x, x, mask)"),
    Mistake("mask inverted", _variant(mask_as="inverted"),
            "your mask is inverted: the paper walkthrough uses 1 = masked, but here True = may attend; pass mask as it is"),
]

_FLOAT32_HINT = ("keep x's dtype: store eps as a Python float (not np.float64(eps)), and do not convert with "
                "astype(np.float64)")


# ----------------------------------------------------------------------------- checks


@check("structure", "TransformerBlock is a class built with (d_model, num_heads, d_ff)")
def structure(kit):
    info = expect_structure(kit, TARGET, params=["d_model", "num_heads", "d_ff"])
    if not info["is_class"]:
        raise Fail(t("'{target}' should be a class (the paper walkthrough's), with __init__(self, d_model, num_heads, d_ff) and "
                     "forward(self, x, mask=None)", target=TARGET))


@check("structure", "after construction, the weights sit under the documented names with the documented shapes")
def weight_layout(kit):
    c = CASES[0]
    want = shapes(c)
    got = kit.drive(numpy_classes.layout, TARGET, init(c), list(want))
    for name, shape in want.items():
        have = got["attributes"][name]
        if have is None:
            raise Fail(t("TransformerBlock(**{init}) has no block.{name}", init=init(c), name=name),
                       t("a part of the block is missing or named otherwise than in the contract: build "
                         "self.attention = MultiHeadAttention(d_model, num_heads), self.norm1 = LayerNorm(d_model), "
                         "self.ff = FeedForward(d_model, d_ff), self.norm2 = LayerNorm(d_model); the checker sets the "
                         "weights under these names"))
        if have != list(shape):
            raise Fail(t("TransformerBlock(**{init}): block.{name} should be an array of shape {want}, got {got}",
                         init=init(c), name=name, want=shape, got=tuple(have) if isinstance(have, list) else have))
    if got["forward"] is None or got["forward"][:2] != ["x", "mask"]:
        raise Fail(t("TransformerBlock.forward should take (x, mask=None), but takes ({params})",
                     params=', '.join(got['forward'] or [])))


@check("shapes", "forward returns x's shape for a single sequence (T, D) and a batch (B, T, D)")
def shapes_check(kit):
    for c in CASES:
        user_block(kit, c)


@check("masking", "padding: PAD positions change nothing at the real positions")
def padding_is_invisible(kit):
    c = CASES[1]
    x, mask = inputs(c)
    real = mask[:, 0, 0, :]  # (B, T)
    out = user_block(kit, c)
    changed = x.copy()
    changed[~real] += 5.0 * np.random.default_rng(c.id).standard_normal(changed[~real].shape)
    out2 = user_block(kit, c, x=changed)
    try:
        compare(out2[real], out[real], t("output at the real positions"), tol=kit.tolerance("float64"))
    except Fail as fail:
        raise Fail(t("{label}: changing x at the PAD positions changed the output at real positions ({fail}). Pass mask "
                     "(True = may attend) to self.attention.forward(x, x, x, mask) as it is", label=c.label,
                     fail=fail)) from None


@check("masking", "causality: under a (T, T) causal mask, changing x after position t leaves positions <= t unchanged")
def causal(kit):
    c = CASES[2]
    x, _ = inputs(c)
    tol = kit.tolerance("float64")
    leak = masks.future_leak(lambda x: user_block(kit, c, x=x), (x,), (masks.noise,), axis=0,
                             same=lambda before, after: matches(after, before, tol))
    if leak:
        try:
            compare(leak.after, leak.before, t("output at positions 0..{pos}", pos=leak.pos), tol=tol)
        except Fail as fail:
            raise Fail(t("{label}: changing x after position {pos} changed the output at positions <= {pos} ({fail}): "
                         "the future leaks; pass mask to the attention as it is (True = visible)", label=c.label,
                         pos=leak.pos, fail=fail)) from None


@check("masking", "a batch item that is all PAD: its queries see no key and get zero attention", followup=True)
def all_pad_item(kit):
    c = _BLIND
    with np.errstate(all="ignore"):
        got, want = user_block(kit, c), reference_block(kit, c)
    if not matches(np.delete(got, 1, axis=0), np.delete(want, 1, axis=0), kit.tolerance("float64")):
        return  # wrong on the items that see keys: the core checks say what is wrong
    if np.isnan(got[1]).any():
        raise Fail(t("{label}: batch item 1 is all PAD, so its queries see no key, and its output came out NaN (softmax "
                     "over a row that is all -inf is 0/0). {why}", label=c.label, why=shared.blind_why(shared.NUMPY_FIX)))
    try:
        compare(got[1], want[1], t("output of batch item 1"), "(T, D)", tol=kit.tolerance("float64"))
    except Fail as fail:
        raise Fail(t("{label}: batch item 1 is all PAD, so its queries see no key: {fail}. With -1e9 for the hidden keys "
                     "(the paper walkthrough's mask * -1e9) such a row attends to every key: evenly where -1e9 replaces the scores, "
                     "as if nothing were masked where it is added. {why}", label=c.label, fail=fail,
                     why=shared.blind_why(shared.NUMPY_FIX))) from None


@check("numerics", "LayerNorm (block.norm1) on its own: sqrt(var + eps), biased variance, eps = 1e-6")
def layer_norm_alone(kit):
    c = CASES[1]
    g = np.random.default_rng(5)
    x = g.standard_normal((c.B, c.T, c.D)) * 3e-3 + 0.7  # variance ~1e-5: where eps goes matters
    x[0, 0] = 2.5  # a constant row: variance 0
    got = user_block(kit, c, x=x, part="norm1", what="norm1.forward")
    w = weights(c, "float64")
    want = _norm(x, w["norm1.gamma"], w["norm1.beta"])
    if np.isnan(got).any():
        raise Fail(t("{label}: block.norm1.forward gave NaN for a constant row (variance 0): divide by "
                     "np.sqrt(var + self.eps)", label=c.label))
    try:
        compare(got, want, "norm1.forward(x)", "(B, T, D)")
    except Fail as fail:
        knobs = [("the paper walkthrough's (x - mean) / (std + eps)", {"std_plus_eps": True}),
                 ("the unbiased std + eps (ddof=1)", {"std_plus_eps": True, "ddof": 1}),
                 ("the unbiased variance (ddof=1)", {"ddof": 1}), ("eps = 1e-5", {"eps": 1e-5})]
        found = next((name for name, k in knobs if matches(got, _norm(x, w["norm1.gamma"], w["norm1.beta"], **k))), None)
        why = t(" Your LayerNorm computes {found}: use gamma * (x - mean) / np.sqrt(var + eps) + beta with the biased "
                "variance and eps = 1e-6", found=t(found)) if found else ""
        raise Fail(t("{label}, rows of variance about 1e-5: {fail}.{why}", label=c.label, fail=fail, why=why)) from None


def _first_divergence(kit, c):
    try:
        found = kit.first_divergence(c)
    except (Fail, UserError):
        return None  # the block cannot be recorded: the other checks say why
    kit.diagnosis = kit.diagnosis or found
    return found


@check("numerics", "matches the reference in float64 on every case")
def numerics64(kit):
    for c in CASES:
        got = user_block(kit, c)
        want = reference_block(kit, c)
        try:
            compare(got, want, t("output"), "(..., T, D)", tol=kit.tolerance("float64"))
        except Fail as fail:
            found = kit.name_mistake((), got, run=lambda m: reference_block(kit, c, impl=m.impl),
                                     tol=kit.tolerance("float64")) or _first_divergence(kit, c)
            raise Fail(t("{label}: {fail}", label=c.label, fail=fail), found,
                       line=kit.divergence_line if found else None) from None


@check("numerics", "large attention scores (about ±1000) do not overflow softmax")
def large_scores(kit):
    c = CASES[1]
    if not matches(user_block(kit, c), reference_block(kit, c), kit.tolerance("float64")):
        return  # a wrong block is reported by "matches the reference in float64", with its diagnosis
    big = {n: (w * 40.0 if n in ("attention.W_q", "attention.W_k") else w) for n, w in weights(c, "float64").items()}
    x, mask = inputs(c)
    reply = kit.drive(numpy_classes.build_and_call, TARGET, init(c), big, (x, mask), "forward", "")
    got = reply.get("output")
    block = kit.solution.TransformerBlock(**init(c))
    for name, value in big.items():
        numpy_classes.set_path(block, name, value.copy())
    want = block.forward(x, mask)
    if isinstance(got, np.ndarray) and not np.all(np.isfinite(got)):
        raise Fail(t("{label}, W_q and W_k scaled by 40: the output holds NaN or inf. exp() of scores in the thousands "
                     "overflows, and a row far below the max subtracted underflows to 0 / 0: softmax must subtract each "
                     "row's own max first (the given softmax does)", label=c.label))
    try:
        compare(got, want, t("output"), "(B, T, D)", tol=kit.tolerance("float64"))
    except Fail as fail:
        raise Fail(t("{label}, W_q and W_k scaled by 40: {fail}", label=c.label, fail=fail)) from None


@check("numerics", "float32 in gives float32 out, close to the reference")
def numerics32(kit):
    widened = None  # the first case whose float32 output came back float64 (right in value: a follow-up)
    for c in CASES:
        got = user_block(kit, c, "float32")
        if isinstance(got, np.ndarray) and got.dtype == np.float64:
            widened = widened or c
            got = got.astype(np.float32)
        try:
            compare(got, reference_block(kit, c, "float32"), t("output"), "(..., T, D)", tol=kit.tolerance("float32"))
        except Fail as fail:
            raise Fail(t("{label}, float32: {fail}", label=c.label, fail=fail)) from None
    if widened is not None:
        raise FollowUp(t("{label}: float32 x and weights gave a float64 output, right in value (a follow-up: memory "
                         "doubles and every later step slows): {hint}", label=widened.label, hint=t(_FLOAT32_HINT)))


@check("hygiene", "forward leaves the caller's x and mask unchanged")
def hygiene(kit):
    for c in CASES:
        sent = inputs(c)
        after = user_block(kit, c, raw=True)["args_after"]
        for name, before, now in zip(("x", "mask"), sent, after):
            if before is None:
                continue
            try:
                compare(now, before, name, exact=True)
            except Fail as fail:
                raise Fail(t("{label}: forward modified its input ({fail}); use x = x + ..., never x += ...",
                             label=c.label, fail=fail)) from None


# No given part (attention, norm1, ff, norm2) is called more often than in the reference.
given_parts_called_once = calls_per_part(sys.modules[__name__])
