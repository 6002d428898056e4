"""Hidden checks: NumPy encoder layer with explicit weights (the NumPy tutorial's signature)."""


import numpy as np
import torch

from checker.checks.shared import attention as shared
from checker.checks.shared import masks
from checker.lang import t
from checker.kit import Fail, Mistake, case, check, compare, expect_structure
from checker.checks.shared.numpy_parts import feed_forward, layer_norm, multi_head_attention

TARGET = "encoder_layer"
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
# The given functions: when the numbers differ, the first call whose input differs is named.
PARTS = ("multi_head_attention", "add_and_norm", "feed_forward_network", "layer_norm")
OUTPUTS = [("output", "(B, T, D)")]
_PARAMS = ["x", "mask", "d_model", "num_heads", "d_ff",
          "Wq_mha", "Wk_mha", "Wv_mha", "Wo_mha", "gamma1_ln", "beta1_ln",
          "W1_ffn", "b1_ffn", "W2_ffn", "b2_ffn", "gamma2_ln", "beta2_ln"]

# Every dimension its own size (B, T, D, H, depth = D // H, d_ff), so a swapped axis cannot pass.
CASES = [
    case(1, B=2, T=5, D=12, H=3, d_ff=20, mask="none"),
    case(2, B=3, T=6, D=8, H=2, d_ff=10, mask="padding (B, 1, 1, T)"),
    case(3, B=2, T=7, D=15, H=5, d_ff=9, mask="padding (B, 1, 1, T)"),
    case(4, B=3, T=4, D=10, H=2, d_ff=6, mask="random (B, 1, T, T)"),
]
# A query that may see no key: beyond the textbook answer (an attention of your own with -inf alone
# gives NaN there), so it is a follow-up, held apart from the core cases.
_BLIND = case(6, B=3, T=4, D=10, H=2, d_ff=6, mask="random (B, 1, T, T), one query sees nothing")


def make_mask(c):
    # padding: every batch item keeps at least one real token (lengths 1..T), and batch item 0 has two PADs
    return masks.case_mask(c, numpy=True)


def weights(c, dtype, g):
    """The NumPy tutorial's weights, scaled so that no softmax saturates: W (in, out) ~ N(0, 1/in)."""

    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale).numpy().astype(dtype)

    D, F = c.D, c.d_ff
    attention = [randn(D, D, scale=D ** -0.5) for _ in range(4)]  # Wq, Wk, Wv, Wo
    norm1 = [randn(D, scale=0.5) + 1, randn(D, scale=0.5)]  # gamma1, beta1 away from (1, 0)
    ffn = [randn(D, F, scale=D ** -0.5), randn(F, scale=0.5), randn(F, D, scale=F ** -0.5), randn(D, scale=0.5)]
    norm2 = [randn(D, scale=0.5) + 1, randn(D, scale=0.5)]
    return attention + norm1 + ffn + norm2


def inputs(c, dtype):
    g = c.generator()
    x = (torch.randn(c.B, c.T, c.D, generator=g, dtype=torch.float64)).numpy().astype(dtype)
    return (x, make_mask(c), c.D, c.H, c.d_ff, *weights(c, dtype, g))


# ----------------------------------------------------------------------------- named mistakes


def encode(x, mask, d_model, num_heads, d_ff, Wq, Wk, Wv, Wo, g1, b1n, W1, b1, W2, b2, g2, b2n, *,
           wiring="right", mask_as="visible"):
    """The encoder layer with knobs; every knob at its default gives the right answer."""
    if mask is not None and mask_as != "visible":
        mask = None if mask_as == "ignored" else ~mask
    if wiring == "ln_swapped":
        g1, b1n, g2, b2n = g2, b2n, g1, b1n
    if wiring == "pre_norm":
        h = x + multi_head_attention(layer_norm(x, g1, b1n), layer_norm(x, g1, b1n), mask, num_heads, Wq, Wk, Wv, Wo)
        return h + feed_forward(layer_norm(h, g2, b2n), W1, b1, W2, b2)
    attn = multi_head_attention(x, x, mask, num_heads, Wq, Wk, Wv, Wo)
    out1 = layer_norm(attn if wiring == "no_residual" else x + attn, g1, b1n)
    ffn = feed_forward(x if wiring == "ffn_on_x" else out1, W1, b1, W2, b2)
    if wiring == "no_second_norm":
        return out1 + ffn
    residual = {"residual2_from_x": x, "no_residual": 0.0}.get(wiring, out1)
    return layer_norm(residual + ffn, g2, b2n)


def _variant(**knobs):
    return lambda *args: encode(*args, **knobs)


MISTAKES = [
    Mistake("pre-norm", _variant(wiring="pre_norm"),
            "your output equals the pre-norm layer, x + MHA(LN(x)) then h + FFN(LN(h)): this kata (like the NumPy tutorial and "
            "the paper) is post-norm, LN(x + MHA(x)) then LN(out1 + FFN(out1))"),
    Mistake("mask ignored", _variant(mask_as="ignored"),
            "your output equals the layer without a mask: pass mask to multi_head_attention, so PAD keys get no weight"),
    Mistake("mask inverted", _variant(mask_as="inverted"),
            "your mask is inverted: the NumPy tutorial passes 1 = PAD, but here the mask is bool with True = a real token that "
            "may be attended to; pass it to multi_head_attention as it is"),
    Mistake("layer norms swapped", _variant(wiring="ln_swapped"),
            "your output uses gamma2_ln, beta2_ln after attention and gamma1_ln, beta1_ln after the FFN: the first "
            "Add & Norm takes gamma1_ln, beta1_ln"),
    Mistake("second Add & Norm missing", _variant(wiring="no_second_norm"),
            "your output equals out1 + FFN(out1) with no layer norm: the FFN sublayer ends with its own Add & Norm, "
            "add_and_norm(out1, ffn_output, gamma2_ln, beta2_ln)"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "encoder_layer is a function with the NumPy tutorial's signature")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=_PARAMS)


@check("masking", "PAD positions change nothing at the real positions")
def padding_is_invisible(kit):
    for c in CASES[1:3]:
        args = kit.inputs(c)
        x, mask = args[0], args[1]
        real = mask[:, 0, 0, :]  # (B, T)
        out = kit.user(args)
        changed = x.copy()
        changed[~real] += 5.0 * np.random.default_rng(c.id).standard_normal(changed[~real].shape)
        out2 = kit.user((changed, *args[1:]))
        for got in (out, out2):
            if not isinstance(got, np.ndarray) or got.shape != x.shape:
                raise Fail(t("{label}: the output should be a NumPy array of shape (B, T, D) = {want} first",
                             label=c.label, want=x.shape))
        try:
            compare(out2[real], out[real], t("output at the real positions"), tol=kit.tolerance("float64"))
        except Fail as fail:
            raise Fail(t("{label}: changing x at the PAD positions changed the output at real positions ({fail}). Real "
                         "tokens must not attend to PAD: pass mask (True = real token) to multi_head_attention "
                         "unchanged; the NumPy tutorial's 1 = PAD convention is the opposite", label=c.label, fail=fail)) from None


@check("masking", "a query that sees no key gets zero attention, not NaN", followup=True)
def fully_hidden_query(kit):
    c = _BLIND
    with np.errstate(all="ignore"):
        got = kit.user(kit.inputs(c))
    if isinstance(got, np.ndarray) and np.isnan(got).any():
        where = tuple(int(i) for i in np.argwhere(np.isnan(got))[0])
        raise Fail(t("{label}: query 2 of batch item 1 sees no key and came out NaN at index {where} (softmax over a "
                     "row that is all -inf is 0/0). The given scaled_dot_product_attention returns zero attention for "
                     "it: use the given blocks, or do the same in your own. {why}", label=c.label, where=where,
                     why=shared.blind_why(shared.NUMPY_FIX)))


@check("properties", "without a mask, permuting the positions permutes the output")
def permutation_equivariant(kit):
    c = CASES[0]
    args = kit.inputs(c)
    perm = np.array([3, 0, 4, 1, 2])
    out = kit.user(args)
    out_perm = kit.user((args[0][:, perm], *args[1:]))
    if not isinstance(out, np.ndarray) or out.shape != args[0].shape:
        raise Fail(t("{label}: the output should be a NumPy array of shape (B, T, D) = {want} first", label=c.label,
                     want=args[0].shape))
    try:
        compare(out_perm, out[:, perm], t("output for the permuted x"), "(B, T, D)")
    except Fail as fail:
        raise Fail(t("{label}: {fail}. Self-attention and the FFN treat positions alike: without a mask (and without "
                     "positional encoding) the layer must not depend on where a token sits; reduce over the keys "
                     "(axis -1 of the scores) and normalise over the features (axis -1)", label=c.label,
                     fail=fail)) from None


@check("numerics", "large attention scores (about ±1000) do not overflow softmax")
def large_scores(kit):
    c = CASES[1]
    shared.layer_survives_large_scores(kit, c, kit.inputs(c), (5, 6), "Wq_mha and Wk_mha", "(B, T, D)")
