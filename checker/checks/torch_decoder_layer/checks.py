"""Hidden checks: PyTorch decoder layer (masked self-attention, cross-attention, FFN; post-LN)."""

import torch
from torch import nn

from checker.checks.child.dropouts import train_own_dropouts
from checker.checks.child.layers import FeedForward, MultiHeadAttention, train_with_only
from checker.checks.shared import masks
from checker.checks.shared.outputs import split
from checker.kit import (Fail, Mistake, UserError, as_outputs, case, check, dropout_elsewhere,
                         dropout_missing, expect_structure, matches)
from checker.lang import t

TARGET = "DecoderLayer"
DROPOUT = True  # the constructor takes dropout: check it acts in training only
# The given sub-modules: when the numbers differ, the first one whose input differs is named.
PARTS = ("self_attn", "cross_attn", "ffn", "norm1", "norm2", "norm3")
OUTPUTS = [("y", "(B, T_t, D)"), ("self_weights", "(B, H, T_t, T_t)"), ("cross_weights", "(B, H, T_t, T_s)")]

# Every dimension its own size (B, T_t, T_s, D, H, d_k, d_ff); T_t != T_s everywhere, so memory
# and the decoder stream cannot be swapped by accident. Case 1 has no memory_mask: a mistake that
# reads K/V from the decoder can only run (and be diagnosed) there.
CASES = [
    case(1, B=2, T_t=5, T_s=7, D=12, H=3, d_k=4, d_ff=20, masks="causal tgt_mask (1, 1, T_t, T_t), no memory_mask"),
    case(2, B=3, T_t=6, T_s=4, D=10, H=2, d_k=5, d_ff=16,
         masks="causal+padding tgt_mask (B, 1, T_t, T_t), padding memory_mask (B, 1, 1, T_s)"),
    case(3, B=4, T_t=3, T_s=7, D=12, H=6, d_k=2, d_ff=9,
         masks="causal+padding tgt_mask (B, 1, T_t, T_t), padding memory_mask (B, 1, 1, T_s)"),
    case(4, B=2, T_t=4, T_s=6, D=15, H=5, d_k=3, d_ff=8, masks="none"),
]
# Queries that see no key: batch item 1 starts with two target PADs, and the source of batch item 2 is
# all PAD. Beyond the textbook answer (an attention of your own with -inf alone gives NaN there), so a
# follow-up, held apart from the core cases.
_EMPTY_ROWS = case(5, B=3, T_t=5, T_s=6, D=8, H=2, d_k=4, d_ff=7,
                  masks="empty rows: target PADs at positions 0-1 of item 1, source of item 2 all PAD")


def init(c):
    return {"d_model": c.D, "num_heads": c.H, "d_ff": c.d_ff, "dropout": 0.0}


def make_masks(c):
    """(tgt_mask, memory_mask): True = may attend. Padding hides keys only (right padding)."""
    if c.masks == "none":
        return None, None
    g = c.generator(salt=1)
    causal = masks.causal(c.T_t, c.T_t).view(1, 1, c.T_t, c.T_t)
    if c.masks.startswith("causal tgt_mask"):
        return causal, None
    if c.masks.startswith("empty rows"):
        tgt_real = torch.ones(c.B, c.T_t, dtype=torch.bool)
        tgt_real[1, :2] = False
        src_real = torch.ones(c.B, c.T_s, dtype=torch.bool)
        src_real[2] = False
        return tgt_real[:, None, None, :] & causal, src_real[:, None, None, :]
    # lengths 2..T: at least one batch item really has padding (item 0), and one has none (the last)
    tgt_real = masks.padding(g, c.B, c.T_t, shortest=2, one_full=True)  # (B, T_t)
    src_real = masks.padding(g, c.B, c.T_s, shortest=2, one_full=True)  # (B, T_s)
    return tgt_real[:, None, None, :] & causal, src_real[:, None, None, :]


def inputs(c, dtype):
    g = c.generator()
    dt = getattr(torch, dtype)
    y = torch.randn(c.B, c.T_t, c.D, generator=g, dtype=torch.float64).to(dt)
    memory = torch.randn(c.B, c.T_s, c.D, generator=g, dtype=torch.float64).to(dt)
    return (y, memory, *make_masks(c))


# ----------------------------------------------------------------------------- named mistakes


class _Knobbed(nn.Module):
    """The reference DecoderLayer with knobs; every knob at its default gives the right answer."""

    kv_from, q_from, residual, norm, causal, memory_pad, order, norms, cross_module, twice = (
        "memory", "y1", "own", "post", True, True, "self first", "own", "cross_attn", None)
    # twice: a sublayer's whole block (sublayer, residual, norm) run a second time on its own output, as a line
    # copied twice does: "self_attn", "cross_attn" (the weights from the second call, or with ", first weights"
    # from the first), "ffn"

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.cross_attn = MultiHeadAttention(d_model, num_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))

    def forward(self, y, memory, tgt_mask=None, memory_mask=None):
        n1, n2, n3 = (self.norm1,) * 3 if self.norms == "norm1" else (self.norm1, self.norm2, self.norm3)
        tgt_mask = tgt_mask if self.causal else None
        memory_mask = memory_mask if self.memory_pad else None
        cross = getattr(self, self.cross_module)

        def self_block(x):
            out, w = self.self_attn(x, x, tgt_mask)
            return out, w

        def cross_block(x, x0):
            q = {"y1": x, "y0": x0}[self.q_from]
            kv = {"memory": memory, "y": x}[self.kv_from]
            return cross(q, kv, memory_mask)

        if self.norm == "pre":
            a, sw = self_block(n1(y))
            y1 = y + a
            b, cw = cross(n2(y1), memory, memory_mask)
            y2 = y1 + b
            return y2 + self.ffn(n3(y2)), sw, cw
        if self.order == "cross first":
            b, cw = cross(y, memory, memory_mask)
            y1 = n1(y + b)
            a, sw = self_block(y1)
            y2 = n2(y1 + a)
            return n3(y2 + self.ffn(y2)), sw, cw
        twice = (self.twice or "").split(", ")[0]
        a, sw = self_block(y)
        y1 = n1(y + a) if self.residual != "none" else n1(a)
        if twice == "self_attn":
            a, sw2 = self_block(y1)
            y1, sw = n1(y1 + a), sw if self.twice.endswith("first weights") else sw2
        b, cw = cross_block(y1, y)
        y2 = {"own": n2(y1 + b), "layer input": n2(y + b), "none": n2(b)}[self.residual]
        if twice == "cross_attn":
            b, cw2 = cross(y2, memory, memory_mask)
            y2, cw = n2(y2 + b), cw if self.twice.endswith("first weights") else cw2
        ffn_in = y2
        y3 = {"own": n3(y2 + self.ffn(ffn_in)), "layer input": n3(y + self.ffn(ffn_in)),
              "none": n3(self.ffn(ffn_in))}[self.residual]
        return (n3(y3 + self.ffn(y3)) if twice == "ffn" else y3), sw, cw


def _variant(**knobs):
    return type("Mistake", (_Knobbed,), knobs)


_TWICE = {
    "self_attn": "your layer runs the masked self-attention sublayer twice, y = norm1(y + dropout(self_attn(y, y, "
                 "tgt_mask)[0])) one more time on its own output: each sublayer runs once (N layers stack them, not "
                 "the layer itself)",
    "cross_attn": "your layer runs the cross-attention sublayer twice, y = norm2(y + dropout(cross_attn(y, memory, "
                  "memory_mask)[0])) one more time on its own output: each sublayer runs once (N layers stack them, "
                  "not the layer itself)",
    "ffn": "your layer runs the FFN sublayer twice, y = norm3(y + dropout(ffn(y))) one more time on its own output: "
           "each sublayer runs once (N layers stack them, not the layer itself)",
}

MISTAKES = [
    Mistake("cross-attention K/V from the decoder", _variant(kv_from="y"),
            "your cross-attention takes its keys and values from the decoder stream (self-attention again): "
            "K and V come from the encoder memory, self.cross_attn(y, memory, memory_mask)"),
    Mistake("cross-attention done with self_attn", _variant(cross_module="self_attn"),
            "your cross-attention runs through self.self_attn (its weights): use the second attention module, "
            "self.cross_attn(y, memory, memory_mask)"),
    Mistake("residual from the layer input", _variant(residual="layer input"),
            "your residuals add the layer's input y to every sublayer: each residual adds its own sublayer's input, "
            "y2 = norm2(y1 + cross(y1)), y3 = norm3(y2 + ffn(y2))"),
    Mistake("no residual", _variant(residual="none"),
            "your output equals the layer without residual connections: each sublayer is norm(x + sublayer(x))"),
    Mistake("pre-LN", _variant(norm="pre"),
            "your output equals the pre-LN layer x + sublayer(norm(x)): this kata is post-LN like the interview tutorial and the "
            "paper, x = norm(x + sublayer(x))"),
    Mistake("cross-attention first", _variant(order="cross first"),
            "your sublayers run in the wrong order: masked self-attention first, then cross-attention, then the FFN"),
    Mistake("one LayerNorm for everything", _variant(norms="norm1"),
            "you use norm1 after every sublayer: each sublayer has its own LayerNorm, norm1, norm2, norm3"),
    *(Mistake(f"{part} sublayer twice{weights}", _variant(twice=part + weights), explain)
      for part, explain in _TWICE.items() for weights in (("", ", first weights") if part != "ffn" else ("",))),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "DecoderLayer is an nn.Module with self_attn, cross_attn, ffn, norm1..3 and forward(y, memory)")
def structure(kit):
    try:
        expect_structure(kit, TARGET, module=True, params=["d_model", "num_heads", "d_ff", "dropout"],
                         forward=["y", "memory", "tgt_mask", "memory_mask"], init=init(CASES[0]))
        expect_structure(kit, TARGET, module=True, init=init(CASES[1]))  # D=10, H=2: nothing hard-coded
    except Fail as fail:
        text, diagnosis = fail.message, fail.diagnosis
        try:  # what the layer has, read from the layer (never from the drawn message)
            params = kit.inspect(TARGET, init(CASES[0]))["parameters"]
        except UserError:
            params = {}
        wanted = [n for n, _ in getattr(kit.solution, TARGET)(**init(CASES[0])).named_parameters()]
        missing = bool(params) and any(n not in params for n in wanted)
        if any(n.startswith(("src_attn.", "feed_forward.")) for n in params):
            diagnosis = t("your submodules carry the PyTorch notebook tutorial's names (src_attn, feed_forward): here they are cross_attn "
                          "and ffn, the names the checker loads the weights into")
        if missing:
            text += t(". Names: self_attn and cross_attn (the given MultiHeadAttention; the PyTorch notebook tutorial calls the second "
                      "src_attn), ffn (the given FeedForward; the PyTorch notebook tutorial: feed_forward), norm1, norm2, norm3 "
                      "(nn.LayerNorm itself; the interview tutorial wraps it in ResidualLayerNorm)")
        raise Fail(text, diagnosis) from None


@check("shapes", "forward returns the flat tuple (y, self_weights, cross_weights)")
def flat_tuple(kit):
    c = CASES[0]
    value = kit.user(kit.inputs(c), case=c)
    if isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[1], (tuple, list)):
        raise Fail(t("{label}: forward returned (y, (self_weights, cross_weights)) as the interview tutorial does", label=c.label),
                   t("this kata returns the flat tuple: return y, self_weights, cross_weights"))
    _triple(value, c)


@check("masking", "tgt_mask goes to the self-attention and memory_mask to the cross-attention")
def masks_reach_their_attention(kit):
    for c in CASES[1:3]:
        args = kit.inputs(c)
        try:
            y, sw, cw = _triple(kit.user(args, case=c), c)
        except UserError as err:
            raise Fail(t("{label}: with tgt_mask (B, 1, T_t, T_t) and memory_mask (B, 1, 1, T_s) your code raised "
                         "{err}. The self-attention takes tgt_mask (T_t keys), the cross-attention memory_mask "
                         "(T_s keys) with K and V from memory: self_attn(y, y, tgt_mask), "
                         "cross_attn(y1, memory, memory_mask)", label=c.label, err=err)) from None
        for name, weights, mask, which in (("self_weights", sw, args[2], "tgt_mask"),
                                           ("cross_weights", cw, args[3], "memory_mask")):
            leaked = weights.masked_fill(mask, 0.0)
            if torch.isnan(leaked).any() or (leaked != 0).any():
                b, h, i, j = (leaked.isnan() | (leaked != 0)).nonzero()[0].tolist()
                raise Fail(t("{label}: {name}[{b}, {h}, {i}, {j}] = {w:.3g}, but {which} hides that key: pass {which} "
                             "to the {attention}", label=c.label, name=name, b=b, h=h, i=i, j=j,
                             w=leaked[b, h, i, j].item(), which=which,
                             attention=t("self-attention") if which == "tgt_mask" else t("cross-attention")))


@check("masking", "with a causal tgt_mask, changing y after position i leaves every output at positions <= i unchanged")
def causal(kit):
    c = CASES[0]
    y, memory, tgt_mask, memory_mask = kit.inputs(c)
    # the positions: axis 1 of y (B, T_t, D), axis 2 of the weights (B, H, T_t, T): axis -2 of each
    leak = masks.future_leak(lambda y: _triple(kit.user((y, memory, tgt_mask, memory_mask), case=c), c), (y,),
                             (3.0,), axis=-2, same=masks.close(1e-9, 1e-10))
    if leak:
        raise Fail(t("{label}: changing y after position {pos} changed {name} at a position ≤ {pos}: the "
                     "future leaks. Pass tgt_mask to the masked self-attention, self.self_attn(y, y, tgt_mask)",
                     label=c.label, pos=leak.pos, name=OUTPUTS[leak.which][0]))


@check("masking", "changing memory at padded source positions changes nothing")
def memory_padding_invariance(kit):
    c = CASES[1]
    y, memory, tgt_mask, memory_mask = kit.inputs(c)
    before = _triple(kit.user((y, memory, tgt_mask, memory_mask), case=c), c)
    pad = ~memory_mask[:, 0, 0, :]  # (B, T_s) True at PAD source positions
    changed = memory.clone()
    changed[pad] += 5.0 + torch.randn(changed[pad].shape, generator=c.generator(salt=5), dtype=memory.dtype)
    after = _triple(kit.user((y, changed, tgt_mask, memory_mask), case=c), c)
    for name, u, v in zip(("y", "self_weights", "cross_weights"), before, after):
        if not torch.allclose(u, v, rtol=1e-9, atol=1e-10):
            raise Fail(t("{label}: changing memory at PAD source positions changed {name}: the cross-attention must "
                         "hide them, self.cross_attn(y, memory, memory_mask)", label=c.label, name=name))


def _why() -> str:
    return t("Follow-up: what should a query that may see no key return (left padding in the target, or a source "
             "that is all PAD)? A NaN there spreads to the whole batch through the loss and its gradients; the given "
             "MultiHeadAttention gives such rows zero weights (weights.masked_fill(~mask, 0.0) after softmax): use it "
             "as given, or do the same in your own")


@check("masking", "a query that sees no key gets zero weights and a finite output, not NaN", followup=True)
def empty_rows(kit):
    # Judged by property only (NaN, the blind rows' weights), so a wiring mistake elsewhere does not fail here.
    c = _EMPTY_ROWS
    y, sw, cw = _triple(kit.user(kit.inputs(c), case=c), c)
    for name, value in (("y", y), ("self_weights", sw), ("cross_weights", cw)):
        if torch.isnan(value).any():
            raise Fail(t("{label}: {name} came out NaN where a query sees no key (target item 1 starts with two "
                         "PADs; the source of item 2 is all PAD). {why}", label=c.label, name=name, why=_why()))
    for name, blind in (("self_weights", sw[1, :, :2]), ("cross_weights", cw[2])):
        if (blind != 0).any():
            raise Fail(t("{label}: {name} gives a query that sees no key non-zero weights (up to {w:.3g}; target item 1 "
                         "starts with two PADs, the source of item 2 is all PAD): a uniform average over hidden keys "
                         "reads PADs and the future. {why}", label=c.label, name=name, w=blind.abs().max().item(),
                         why=_why()))


@check("properties", "the cross-attention reads memory, the self-attention does not")
def reads_memory(kit):
    c = CASES[0]
    y, memory, tgt_mask, memory_mask = kit.inputs(c)
    before = _triple(kit.user((y, memory, tgt_mask, memory_mask), case=c), c)
    other = torch.randn(memory.shape, generator=c.generator(salt=9), dtype=memory.dtype)
    after = _triple(kit.user((y, other, tgt_mask, memory_mask), case=c), c)
    if matches(before[0], after[0]):
        raise Fail(t("{label}: replacing memory by other values did not change y: the cross-attention must take its "
                     "keys and values from memory, self.cross_attn(y, memory, memory_mask)", label=c.label))
    if not matches(before[1], after[1]):
        raise Fail(t("{label}: replacing memory changed self_weights: the masked self-attention reads y only "
                     "(Q = K = V = y) and comes first; memory enters in the cross-attention", label=c.label))


# Each probe keeps one dropout on (p=0.5) and switches the other sublayers' contributions off, so
# the result shows whether that dropout acts where the contract puts it.
_PROBES = [
    ("dropout", ("cross_attn.W_o", "ffn.fc2"), "self.dropout on the self-attention output before the residual"),
    ("dropout", ("self_attn.W_o", "ffn.fc2"), "self.dropout on the cross-attention output before the residual"),
    ("dropout", ("self_attn.W_o", "cross_attn.W_o"), "self.dropout on the FFN output before the residual"),
    ("self_attn.dropout", ("cross_attn.W_o", "ffn.fc2"), "the given MultiHeadAttention's dropout (self_attn)"),
    ("cross_attn.dropout", ("self_attn.W_o", "ffn.fc2"), "the given MultiHeadAttention's dropout (cross_attn)"),
    ("ffn.dropout", ("self_attn.W_o", "cross_attn.W_o"), "the given FeedForward's dropout"),
]


@check("properties", "in training, self.dropout acts on each of the three sublayer outputs")
def every_dropout_acts(kit):
    c = CASES[1]
    args, dropout = kit.inputs(c), {**init(c), "dropout": 0.5}
    for active, off, where in _PROBES:
        state = kit.state(c, "float64")
        for name in off:  # this sublayer now adds exactly zero
            state[f"{name}.weight"] = torch.zeros_like(state[f"{name}.weight"])
            state[f"{name}.bias"] = torch.zeros_like(state[f"{name}.bias"])
        value = kit.drive(train_with_only, TARGET, dropout, state, args, [active])
        trained = as_outputs(value, OUTPUTS)[0]
        if matches(trained, kit.reference(args, case=c, init=dropout, state=state)[0]):
            if "given" in where:
                raise Fail(t("{label}: with dropout=0.5 in training mode, only '{active}' on and the other sublayers "
                             "switched off, y equals the result without dropout: did you change the given classes? "
                             "Keep them as they are", label=c.label, active=active))
            raise Fail(t("{label}: with dropout=0.5 in training mode, only '{active}' on and the other sublayers "
                         "switched off, y equals the result without dropout: apply {where}", label=c.label,
                         active=active, where=t(where)),
                       dropout_missing())


@check("properties", "dropout hits the sublayer outputs only: with all three sublayers silenced, training changes nothing")
def dropout_nowhere_else(kit):
    c = CASES[1]
    args, dropout = kit.inputs(c), {**init(c), "dropout": 0.5}
    state = kit.state(c, "float64")
    for name in ("self_attn.W_o", "cross_attn.W_o", "ffn.fc2"):  # every sublayer now adds exactly zero
        state[f"{name}.weight"] = torch.zeros_like(state[f"{name}.weight"])
        state[f"{name}.bias"] = torch.zeros_like(state[f"{name}.bias"])
    given = ("self_attn.dropout", "cross_attn.dropout", "ffn.dropout")
    trained = kit.drive(train_own_dropouts, TARGET, dropout, state, args, given)
    # Compared with the user's own layer in eval mode, same weights: a wiring mistake is no dropout mistake.
    if not isinstance(trained, torch.Tensor) or not matches(trained, _triple(kit.user(args, case=c, init=dropout,
                                                                                      state=state), c)[0]):
        raise Fail(t("{label}, training mode, dropout=0.5, the three sublayers all outputting 0: your y changes, so "
                     "dropout hits y, a residual sum or a normalized output. Apply it to each sublayer's output only, "
                     "before the add: norm1(y + dropout(sa_out)), norm2(y + dropout(ca_out)), "
                     "norm3(y + dropout(ffn(y)))", label=c.label),
                   dropout_elsewhere())


def _triple(value, c):
    wants = ((c.B, c.T_t, c.D), (c.B, c.H, c.T_t, c.T_t), (c.B, c.H, c.T_t, c.T_s))
    shapes = {name: (want, legend) for (name, legend), want in zip(OUTPUTS, wants)}  # y, self_weights, cross_weights
    return split(value, c, tuple(shapes), **shapes)
