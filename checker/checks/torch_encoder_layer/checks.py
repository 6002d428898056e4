"""Hidden checks: the encoder layer (the interview tutorial): self-attention and FFN, each with a residual and post-LN.

The stub ships MultiHeadAttention and FeedForward complete; the named mistakes below reuse the
reference's (they are the same code) and change only EncoderLayer.forward.
"""

import torch

from checker.catalogue import find
from checker.checks.child.layers import train_without_given_dropouts
from checker.checks.shared import masks
from checker.catalogue import load_solution
from checker.kit import (Fail, Mistake, UserError, case, check, dropout_elsewhere, dropout_missing, expect_structure,
                         matches, shape_relation)
from checker.lang import t

TARGET = "EncoderLayer"
DROPOUT = True  # the constructor takes dropout: check it acts in training only
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
# The given sub-modules: when the numbers differ, the first one whose input differs is named.
PARTS = ("self_attn", "ffn", "norm1", "norm2")
OUTPUTS = [("output", "(B, T, D)"), ("attn", "(B, H, T, T)")]

# Every dimension its own size (B, T, D, H, d_k, d_ff); case 3 has d_ff < D, so nothing assumes
# an expansion. Padding on the right with a different length per batch item.
CASES = [
    case(1, B=2, T=5, D=12, H=3, d_k=4, d_ff=20, mask="none"),
    case(2, B=3, T=6, D=8, H=2, d_k=4, d_ff=10, mask="padding (B, 1, 1, T)"),
    case(3, B=4, T=7, D=10, H=5, d_k=2, d_ff=6, mask="padding (B, 1, 1, T)"),
]
TIMING = case(4, B=8, T=64, D=128, H=8, d_k=16, d_ff=512, mask="padding (B, 1, 1, T)")


def init(c):
    return {"d_model": c.D, "num_heads": c.H, "d_ff": c.d_ff, "dropout": 0.0}


def make_mask(c):
    # padding, True = real token: lengths 2..T, at least one batch item really has padding (item 0), and one has
    # none (the last)
    return masks.case_mask(c, shortest=2, one_full=True)


def inputs(c, dtype):
    x = torch.randn(c.B, c.T, c.D, generator=c.generator(), dtype=torch.float64).to(getattr(torch, dtype))
    return x, make_mask(c)


# ----------------------------------------------------------------------------- named mistakes

_solution = load_solution(find("encoder_layer"))


class _Knobbed(_solution.EncoderLayer):
    """The reference layer with knobs on forward; every knob at its default gives the right answer."""

    order, ffn_residual, ffn_input, attn_residual, norms, mask, sublayers, twice = (
        "post", "x1", "x1", "x", "two", "used", "attention first", None)
    # twice: a sublayer's whole block (sublayer, residual, norm) run a second time on its own output, as a line
    # copied twice does: "self_attn" (attn from the second call), "self_attn, first weights", "ffn"

    def forward(self, x, src_mask=None):
        mask = {"used": src_mask, "ignored": None,
                "inverted": None if src_mask is None else ~src_mask}[self.mask]
        norm2 = self.norm1 if self.norms == "norm1 twice" else self.norm2
        if self.order == "pre":
            h = self.norm1(x)
            sa, attn = self.self_attn(h, h, mask)
            x1 = x + sa
            return x1 + self.ffn(self.norm2(x1)), attn
        if self.sublayers == "ffn first":
            x1 = self.norm1(x + self.ffn(x))
            sa, attn = self.self_attn(x1, x1, mask)
            return self.norm2(x1 + sa), attn
        sa, attn = self.self_attn(x, x, mask)
        x1 = self.norm1((x if self.attn_residual == "x" else 0) + sa)
        if self.twice in ("self_attn", "self_attn, first weights"):
            sa2, attn2 = self.self_attn(x1, x1, mask)
            x1 = self.norm1(x1 + sa2)
            attn = attn2 if self.twice == "self_attn" else attn
        residual = {"x1": x1, "input": x, "sa_out": sa, "none": 0}[self.ffn_residual]
        out = norm2(residual + self.ffn(x1 if self.ffn_input == "x1" else x))
        return (norm2(out + self.ffn(out)) if self.twice == "ffn" else out), attn


def _variant(**knobs):
    return type("Mistake", (_Knobbed,), knobs)


_SA_TWICE = ("your layer runs the self-attention sublayer twice, x = norm1(x + dropout(self_attn(x, x, src_mask)[0])) one "
             "more time on its own output: each sublayer runs once (N layers stack them, not the layer itself)")

MISTAKES = [
    Mistake("pre-LN", _variant(order="pre"),
            "your output is the pre-LN layer, x + Attn(norm1(x)) then x + FFN(norm2(x)): this layer is post-LN like "
            "the interview tutorial and the paper, x = norm1(x + dropout(sa_out)); x = norm2(x + dropout(ffn(x)))"),
    Mistake("FFN residual from the layer input", _variant(ffn_residual="input"),
            "your FFN residual adds the layer's INPUT: after the first Add & Norm, x is norm1's output, and the FFN "
            "residual adds that: x1 = norm1(x + sa_out); out = norm2(x1 + ffn(x1))"),
    Mistake("FFN reads the layer input", _variant(ffn_input="input"),
            "your FFN reads the layer's input x instead of norm1's output: x1 = norm1(x + sa_out), then ffn(x1) "
            "(reassign x, as the interview tutorial does)"),
    Mistake("norm1 used twice", _variant(norms="norm1 twice"),
            "your layer applies norm1 after both sublayers: each sublayer has its own LayerNorm, norm1 after "
            "attention and norm2 after the FFN (their γ and β differ)"),
    Mistake("mask inverted", _variant(mask="inverted"),
            "your mask is inverted: src_mask is True at the keys that may be attended (real tokens); pass it as it is"),
    Mistake("FFN before attention", _variant(sublayers="ffn first"),
            "your layer runs the FFN before the attention: the encoder layer is self-attention first, then the FFN"),
    Mistake("self-attention sublayer twice", _variant(twice="self_attn"), _SA_TWICE),
    Mistake("self-attention sublayer twice, first weights", _variant(twice="self_attn, first weights"), _SA_TWICE),
    Mistake("FFN sublayer twice", _variant(twice="ffn"),
            "your layer runs the FFN sublayer twice, x = norm2(x + dropout(ffn(x))) one more time on its own "
            "output: each sublayer runs once (N layers stack them, not the layer itself)"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "EncoderLayer is an nn.Module with self_attn, ffn, norm1, norm2 and forward(x, src_mask)")
def structure(kit):
    try:
        expect_structure(kit, TARGET, module=True, params=["d_model", "num_heads", "d_ff", "dropout"],
                         forward=["x", "src_mask"], init=init(CASES[0]))
        expect_structure(kit, TARGET, module=True, init=init(CASES[2]))  # d_ff < d_model: nothing hard-coded
    except Fail as fail:
        text, diagnosis = fail.message, fail.diagnosis
        # what the layer has, read from the layer (never from the message, which is drawn in either language)
        try:
            params = kit.inspect(TARGET, init(CASES[0]))["parameters"]
        except UserError:
            raise fail from None
        wanted = [n for n, _ in getattr(kit.solution, TARGET)(**init(CASES[0])).named_parameters()]
        missing = [n for n in wanted if n not in params]
        if "norm1.ln.weight" in params or "norm2.ln.weight" in params:
            diagnosis = t("your norms are the interview tutorial's ResidualLayerNorm (weights at norm1.ln.weight); here norm1 and "
                          "norm2 ARE the nn.LayerNorm(d_model) modules: self.norm1 = nn.LayerNorm(d_model), and the "
                          "layer adds the residual itself, x = self.norm1(x + self.dropout(sa_out))")
        elif missing and missing[0].startswith(("norm1.", "norm2.")):
            if "norm1.weight" in params and not any(n.startswith("norm2.") for n in params):
                diagnosis = t("your layer has norm1 but no norm2 with weights of its own (norm2 is missing, or "
                              "self.norm2 = self.norm1 makes the two one module): make two separate "
                              "nn.LayerNorm(d_model), each with its own γ and β")
            else:
                text += t(". norm1 and norm2 are two separate nn.LayerNorm(d_model), each with its own γ and β "
                          "(self.norm2 = self.norm1 makes them one)")
        raise Fail(text, diagnosis) from None


_OUTPUT_ALONE = ("your forward returns a single (B, T, D) tensor, with no attention weights: return the pair "
                 "(x, attn), attn being the (B, H, T, T) weights your self-attention returns "
                 "(sa_out, attn = self.self_attn(x, x, src_mask))")


def _pair(value, c):
    if not (isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, torch.Tensor) for v in value)):
        alone = isinstance(value, torch.Tensor) and tuple(value.shape) == (c.B, c.T, c.D)
        raise Fail(t("{label}: forward should return a tuple (x, attn) of tensors, as the interview tutorial's EncoderLayer does",
                     label=c.label), t(_OUTPUT_ALONE) if alone else None)
    out, attn = value
    if tuple(out.shape) != (c.B, c.T, c.D):
        raise Fail(t("{label}: the output should have shape (B, T, D) = {want}, got {got}", label=c.label,
                     want=(c.B, c.T, c.D), got=tuple(out.shape)),
                   shape_relation(tuple(out.shape), (c.B, c.T, c.D), "(B, T, D)"), general=True)
    return out, attn


@check("masking", "the content of PAD positions changes no real token's output")
def padding_invariance(kit):
    c = CASES[2]
    x, mask = kit.inputs(c)
    out, _ = _pair(kit.user((x, mask), case=c), c)
    real = mask[:, 0, 0, :]  # (B, T)
    changed = x.clone()
    noise = 3.0 + torch.randn(x.shape, generator=c.generator(salt=5), dtype=x.dtype)
    changed[~real] += noise[~real]  # change only the PAD positions
    out2, _ = _pair(kit.user((changed, mask), case=c), c)
    moved = ~torch.isclose(out, out2, rtol=1e-9, atol=1e-10) & real[..., None]
    if moved.any():
        b, pos = moved.any(-1).nonzero()[0].tolist()
        raise Fail(t("{label}: changing the PAD positions of x changed the output of the real token at batch {b}, "
                     "position {pos}: hide the PAD keys, pass src_mask to the self-attention (True = may attend), "
                     "self.self_attn(x, x, src_mask)", label=c.label, b=b, pos=pos))


@check("masking", "attn gives the PAD keys exactly zero weight")
def pad_keys_zero(kit):
    c = CASES[1]
    x, mask = kit.inputs(c)
    _, attn = _pair(kit.user((x, mask), case=c), c)
    want = (c.B, c.H, c.T, c.T)
    if tuple(attn.shape) != want:
        raise Fail(t("{label}: attn should have shape (B, H, T, T) = {want}, got {got}: return the self-attention's "
                     "weights, every head", label=c.label, want=want, got=tuple(attn.shape)),
                   shape_relation(tuple(attn.shape), want, "(B, H, T, T)"), general=True)
    leaked = attn.masked_fill(mask.expand(want), 0.0)
    if torch.isnan(leaked).any() or (leaked != 0).any():
        b, h, i, j = (leaked.isnan() | (leaked != 0)).nonzero()[0].tolist()
        raise Fail(t("{label}: query {i} gives weight {w:.3g} to the PAD key {j} (batch {b}, head {h}): pass src_mask "
                     "to the self-attention, unchanged", label=c.label, i=i, w=leaked[b, h, i, j].item(), j=j, b=b,
                     h=h))


@check("properties", "post-LN: the output comes out of norm2, so (out − β₂)/γ₂ has zero mean and unit variance per row")
def output_is_normalized(kit):
    c = CASES[0]
    x, mask = kit.inputs(c)
    out, attn = _pair(kit.user((x, mask), case=c), c)
    state = kit.state(c, "float64")
    z = (out - state["norm2.bias"]) / state["norm2.weight"]
    mean, var = z.mean(-1), z.var(-1, unbiased=False)
    # After LayerNorm, z = (h - mean) / sqrt(var_h + eps): mean 0, variance var_h / (var_h + eps), within 1e-4 of 1.
    if not (torch.allclose(mean, torch.zeros_like(mean), atol=1e-8) and torch.allclose(var, torch.ones_like(var), atol=1e-3)):
        found = kit.diagnose(c, "float64", (out, attn))
        raise Fail(t("{label}: (out − norm2.bias) / norm2.weight should have mean 0 and variance 1 in every row (the "
                     "last step of a post-LN layer is norm2), got means up to {mean:.3g} and variances "
                     "{low:.3g}..{high:.3g}. The layer ends with x = norm2(x + dropout(ffn(x)))", label=c.label,
                     mean=mean.abs().max().item(), low=var.min().item(), high=var.max().item()), found)


def _train_output(kit, c, silence, own_eval=False):
    """The layer's output in training mode, dropout=0.5, with the listed sublayers' last Linear zeroed
    (so they output 0) and the given blocks' inner dropouts off: only the layer's own dropout is random."""
    x, mask = kit.inputs(c)
    state = dict(kit.state(c, "float64"))
    for prefix in silence:
        state[f"{prefix}.weight"] = torch.zeros_like(state[f"{prefix}.weight"])
        state[f"{prefix}.bias"] = torch.zeros_like(state[f"{prefix}.bias"])
    init_kwargs = {**init(c), "dropout": 0.5}
    out = kit.drive(train_without_given_dropouts, TARGET, init_kwargs, state, x, mask)
    want = kit.reference((x, mask), case=c, init=init_kwargs, state=state)[0]  # eval mode: no dropout
    if own_eval:  # the user's own layer in eval mode, same weights: a wiring mistake is no dropout mistake
        want = _pair(kit.user((x, mask), case=c, init=init_kwargs, state=state), c)[0]
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(want.shape):
        raise Fail(t("{label}: forward should return (x, attn) with x of shape (B, T, D) = {want}", label=c.label,
                     want=tuple(want.shape)))
    return out, want


@check("properties", "dropout hits the sublayer outputs only: with both sublayers silenced, training changes nothing")
def dropout_nowhere_else(kit):
    c = CASES[1]
    out, want = _train_output(kit, c, ("self_attn.W_o", "ffn.fc2"), own_eval=True)
    if not matches(out, want):
        raise Fail(t("{label}, training mode, dropout=0.5, attention and FFN both outputting 0: your output changes, "
                     "so dropout hits x, a residual sum or a normalized output. Apply it to each sublayer's output "
                     "only, before the add: norm1(x + dropout(sa_out)), norm2(x + dropout(ffn(x)))", label=c.label),
                   dropout_elsewhere())


@check("properties", "dropout acts on the attention output: norm1(x + dropout(sa_out)) in training")
def dropout_after_attention(kit):
    c = CASES[1]
    out, want = _train_output(kit, c, ("ffn.fc2",))
    if matches(out, want):
        raise Fail(t("{label}, training mode, dropout=0.5, FFN outputting 0 and the given blocks' inner dropouts off: "
                     "your output equals the eval-mode output, so the attention output is not dropped out: "
                     "x = self.norm1(x + self.dropout(sa_out))", label=c.label),
                   dropout_missing())


@check("properties", "dropout acts on the FFN output: norm2(x + dropout(ffn(x))) in training")
def dropout_after_ffn(kit):
    c = CASES[1]
    out, want = _train_output(kit, c, ("self_attn.W_o",))
    if matches(out, want):
        raise Fail(t("{label}, training mode, dropout=0.5, attention outputting 0 and the given blocks' inner "
                     "dropouts off: your output equals the eval-mode output, so the FFN output is not dropped out: "
                     "x = self.norm2(x + self.dropout(self.ffn(x)))", label=c.label),
                   dropout_missing())
