"""Hidden checks: NumPy decoder layer with explicit weights (the NumPy tutorial's signature)."""


import numpy as np
import torch

from checker.checks.shared import attention as shared
from checker.checks.shared import masks
from checker.lang import t
from checker.kit import Fail, Mistake, UserError, case, check, compare, expect_structure, matches
from checker.checks.shared.numpy_parts import feed_forward, layer_norm, multi_head_attention

TARGET = "decoder_layer"
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
# The given functions: when the numbers differ, the first call whose input differs is named.
PARTS = ("multi_head_attention", "add_and_norm", "feed_forward_network", "layer_norm")
OUTPUTS = [("output", "(B, T_t, D)")]
_PARAMS = ["x", "encoder_output", "lookahead_mask", "padding_mask", "d_model", "num_heads", "d_ff",
          "Wq_msa", "Wk_msa", "Wv_msa", "Wo_msa", "gamma1_ln", "beta1_ln",
          "Wq_ca", "Wk_ca", "Wv_ca", "Wo_ca", "gamma2_ln", "beta2_ln",
          "W1_ffn", "b1_ffn", "W2_ffn", "b2_ffn", "gamma3_ln", "beta3_ln"]
_X, _ENC, _LOOKAHEAD, _PADDING = 0, 1, 2, 3  # argument positions
_WQ_MSA, _WK_MSA = 7, 8

# Every dimension its own size (B, T_t, T_s, D, H, depth = D // H, d_ff), except in case 1, where
# T_t = T_s as in the NumPy tutorial's own test: there, code that swaps the masks or takes the cross-attention's
# keys from the decoder still runs, so the mistake can be named. Elsewhere T_s != T_t catches them.
CASES = [
    case(1, B=2, T_t=6, T_s=6, D=12, H=3, d_ff=20, masks="causal (1, 1, T_t, T_t); padding (B, 1, 1, T_s)"),
    case(2, B=3, T_t=5, T_s=7, D=8, H=2, d_ff=10, masks="causal (1, 1, T_t, T_t); padding (B, 1, 1, T_s)"),
    case(3, B=2, T_t=7, T_s=4, D=15, H=5, d_ff=9,
         masks="causal and target padding (B, 1, T_t, T_t); padding (B, 1, 1, T_s)"),
    case(4, B=3, T_t=4, T_s=5, D=10, H=2, d_ff=6, masks="causal (1, 1, T_t, T_t); padding (B, 1, 1, T_s)"),
    case(5, B=2, T_t=3, T_s=5, D=8, H=4, d_ff=7, masks="causal (1, 1, T_t, T_t); padding None"),
]
# A source that is all PAD, so its queries see no key: beyond the textbook answer (an attention of your
# own with -inf alone gives NaN there), so it is a follow-up, held apart from the core cases.
_BLIND = case(6, B=3, T_t=4, T_s=5, D=10, H=2, d_ff=6,
              masks="causal (1, 1, T_t, T_t); padding (B, 1, 1, T_s), batch item 2 all PAD")


def make_masks(c):
    """(lookahead_mask, padding_mask), True = visible; padding: lengths 1..T, batch item 0 always has two PADs."""
    g = c.generator(salt=1)
    causal = np.tril(np.ones((c.T_t, c.T_t), dtype=bool))  # (T_t, T_t), query i sees keys <= i
    lookahead = causal[None, None]  # (1, 1, T_t, T_t)
    if "target padding" in c.masks:
        lookahead = causal[None, None] & masks.padding(g, c.B, c.T_t).numpy()[:, None, None, :]  # (B, 1, T_t, T_t)
    if "padding None" in c.masks:
        return lookahead, None
    real = masks.padding(g, c.B, c.T_s).numpy()  # (B, T_s) bool, True = real
    if "all PAD" in c.masks:
        real[2] = False
    return lookahead, real[:, None, None, :]  # (B, 1, 1, T_s)


def inputs(c, dtype):
    g = c.generator()

    def randn(*shape, scale=1.0, shift=0.0):
        return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale + shift).numpy().astype(dtype)

    D, F = c.D, c.d_ff
    x, enc = randn(c.B, c.T_t, D), randn(c.B, c.T_s, D, scale=1.3, shift=0.2)

    def attention():  # Wq, Wk, Wv, Wo and the Add & Norm after it
        return [randn(D, D, scale=D ** -0.5) for _ in range(4)] + [randn(D, scale=0.5, shift=1.0), randn(D, scale=0.5)]

    ffn = [randn(D, F, scale=D ** -0.5), randn(F, scale=0.5), randn(F, D, scale=F ** -0.5), randn(D, scale=0.5)]
    norm3 = [randn(D, scale=0.5, shift=1.0), randn(D, scale=0.5)]
    return (x, enc, *make_masks(c), c.D, c.H, c.d_ff, *attention(), *attention(), *ffn, *norm3)


# ----------------------------------------------------------------------------- named mistakes


def decode(x, enc, la, pm, d_model, H, d_ff, Wq1, Wk1, Wv1, Wo1, g1, n1, Wq2, Wk2, Wv2, Wo2, g2, n2,
           W1, b1, W2, b2, g3, n3, *, wiring="right", lookahead="given", padding="given", kv="encoder", q="out1"):
    """The decoder layer with knobs; every knob at its default gives the right answer."""
    T = x.shape[1]
    la = {"given": la, "ignored": None, "inverted": ~la if la is not None else None,
          "diagonal hidden": np.tril(np.ones((T, T), dtype=bool), k=-1)[None, None]}[lookahead]
    pm = {"given": pm, "ignored": None, "inverted": ~pm if pm is not None else None}[padding]
    if wiring == "masks swapped":
        la, pm = pm, la
    if wiring == "cross uses self weights":
        Wq2, Wk2, Wv2, Wo2 = Wq1, Wk1, Wv1, Wo1
    if wiring == "pre_norm":
        h = x + multi_head_attention(layer_norm(x, g1, n1), layer_norm(x, g1, n1), la, H, Wq1, Wk1, Wv1, Wo1)
        h = h + multi_head_attention(layer_norm(h, g2, n2), enc, pm, H, Wq2, Wk2, Wv2, Wo2)
        return h + feed_forward(layer_norm(h, g3, n3), W1, b1, W2, b2)
    out1 = layer_norm(x + multi_head_attention(x, x, la, H, Wq1, Wk1, Wv1, Wo1), g1, n1)
    memory = {"encoder": enc, "x": x, "out1": out1}[kv]
    a2 = multi_head_attention(x if q == "x" else out1, memory, pm, H, Wq2, Wk2, Wv2, Wo2)
    out2 = layer_norm((x if wiring == "residual2_from_x" else out1) + a2, g2, n2)
    ffn = feed_forward(out1 if wiring == "ffn_on_out1" else out2, W1, b1, W2, b2)
    return layer_norm((out1 if wiring == "residual3_from_out1" else out2) + ffn, g3, n3)


def _variant(**knobs):
    return lambda *args: decode(*args, **knobs)


MISTAKES = [
    Mistake("cross K/V from x", _variant(kv="x"),
            "your cross-attention takes its keys and values from x, the decoder's input: K and V come from "
            "encoder_output, multi_head_attention(out1, encoder_output, encoder_output, padding_mask, ...)"),
    Mistake("cross K/V from out1", _variant(kv="out1"),
            "your cross-attention takes its keys and values from out1 (it is a second self-attention): K and V "
            "come from encoder_output, only Q from out1"),
    Mistake("masks swapped", _variant(wiring="masks swapped"),
            "your masks are swapped: the look-ahead mask belongs to the self-attention (scores (B, H, T_t, T_t)), the "
            "padding mask to the cross-attention (scores (B, H, T_t, T_s))"),
    Mistake("diagonal hidden", _variant(lookahead="diagonal hidden"),
            "your self-attention hides the diagonal: position i must see itself and every earlier position, "
            "np.tril(np.ones((T, T), bool)) (k=0), or np.triu(..., k=1) == 0; use the lookahead_mask argument"),
    Mistake("look-ahead mask inverted", _variant(lookahead="inverted"),
            "your look-ahead mask is inverted: here True = visible (the NumPy tutorial and the paper walkthrough use 1 = hidden); pass "
            "lookahead_mask as it is"),
    Mistake("padding mask inverted", _variant(padding="inverted"),
            "your padding mask is inverted: here True = a real source token (the NumPy tutorial uses 1 = PAD); pass "
            "padding_mask as it is"),
    Mistake("cross-attention uses the self-attention's weights", _variant(wiring="cross uses self weights"),
            "your cross-attention uses Wq_msa, Wk_msa, Wv_msa, Wo_msa: it has its own, Wq_ca, Wk_ca, Wv_ca, Wo_ca"),
    Mistake("pre-norm", _variant(wiring="pre_norm"),
            "your output equals the pre-norm layer (x + Sublayer(LN(x)) three times): this kata, like the NumPy tutorial and "
            "the paper, is post-norm, LN(x + Sublayer(x))"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "decoder_layer is a function with the NumPy tutorial's signature")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=_PARAMS)


def _output(kit, args, c):
    got = kit.user(args)
    want = (c.B, c.T_t, c.D)
    if not isinstance(got, np.ndarray) or got.shape != want:
        shape = got.shape if isinstance(got, np.ndarray) else t("a {kind}", kind=type(got).__name__)
        raise Fail(t("{label}: the output should be a NumPy array of shape (B, T_t, D) = {want}, got {got}",
                     label=c.label, want=want, got=shape))
    return got


@check("shapes", "runs when the source and target lengths differ (T_s != T_t)")
def lengths_differ(kit):
    for c in CASES[1:3]:
        try:
            _output(kit, kit.inputs(c), c)
        except UserError as err:
            if err.not_implemented or "broadcast" not in err.text:
                raise
            raise Fail(t("{label}: your code raised {err}. With T_t = {T_t} and T_s = {T_s}, the self-attention's scores "
                         "are (B, H, T_t, T_t) and take lookahead_mask; the cross-attention's scores are "
                         "(B, H, T_t, T_s) and take padding_mask (B, 1, 1, T_s). Check that the cross-attention's keys "
                         "and values come from encoder_output (Q from out1) and that the masks are not swapped",
                         label=c.label, err=err, T_t=c.T_t, T_s=c.T_s)) from None


@check("masking", "causality: changing x after position t leaves the output up to t unchanged")
def causal(kit):
    c = CASES[1]
    args = kit.inputs(c)
    tol = kit.tolerance("float64")
    leak = masks.future_leak(lambda x: _output(kit, (x, *args[1:]), c), args[:1], (masks.noise,),
                             same=lambda before, after: matches(after, before, tol))
    if leak:
        try:
            compare(leak.after, leak.before, t("output at positions 0..{pos}", pos=leak.pos), tol=tol)
        except Fail as fail:
            raise Fail(t("{label}: changing x after position {pos} changed the output at positions <= {pos} ({fail}): the "
                         "future leaks. Pass lookahead_mask (True = visible) to the self-attention as it is",
                         label=c.label, pos=leak.pos, fail=fail)) from None


@check("masking", "the source's PAD tokens change nothing")
def padding_is_invisible(kit):
    for c in CASES[1:3]:
        args = kit.inputs(c)
        real = args[_PADDING][:, 0, 0, :]  # (B, T_s)
        out = _output(kit, args, c)
        changed = args[_ENC].copy()
        changed[~real] += 5.0 * np.random.default_rng(c.id).standard_normal(changed[~real].shape)
        out2 = _output(kit, (args[_X], changed, *args[2:]), c)
        try:
            compare(out2, out, "output", "(B, T_t, D)", tol=kit.tolerance("float64"))
        except Fail as fail:
            raise Fail(t("{label}: changing encoder_output at its PAD positions changed the output ({fail}). Pass "
                         "padding_mask (True = real source token) to the cross-attention as it is", label=c.label,
                         fail=fail)) from None


@check("masking", "a source that is all PAD gives zero cross-attention, not NaN", followup=True)
def all_pad_source(kit):
    c = _BLIND
    with np.errstate(all="ignore"):
        got = _output(kit, kit.inputs(c), c)
    if np.isnan(got).any():
        where = tuple(int(i) for i in np.argwhere(np.isnan(got))[0])
        raise Fail(t("{label}: batch item 2's source is all PAD, so its queries see no key; they came out NaN at index "
                     "{where} (softmax over a row that is all -inf is 0/0). The given scaled_dot_product_attention "
                     "returns zero attention for them: use the given blocks, or do the same in your own. {why}",
                     label=c.label, where=where, why=shared.blind_why(shared.NUMPY_FIX)))


@check("properties", "the output depends on encoder_output: cross-attention reads the encoder")
def reads_the_encoder(kit):
    c = CASES[4]  # padding_mask None: runs even if K and V come from the decoder
    args = kit.inputs(c)
    out = _output(kit, args, c)
    out2 = _output(kit, (args[_X], args[_ENC] + 1.5 * np.random.default_rng(0).standard_normal(args[_ENC].shape),
                         *args[2:]), c)
    if np.allclose(out, out2, rtol=1e-12, atol=1e-12):
        raise Fail(t("{label}: changing encoder_output did not change the output: the cross-attention must take its "
                     "keys and values from encoder_output, multi_head_attention(out1, encoder_output, encoder_output, "
                     "padding_mask, ...)", label=c.label))


@check("numerics", "large attention scores (about ±1000) do not overflow softmax")
def large_scores(kit):
    c = CASES[1]
    shared.layer_survives_large_scores(kit, c, kit.inputs(c), (_WQ_MSA, _WK_MSA), "Wq_msa and Wk_msa", "(B, T_t, D)")
