"""Hidden checks: PyTorch multi-head attention (self and cross)."""

import math

import torch
from torch import nn

from checker.checks.shared import attention as shared
from checker.checks.shared import masks
from checker.checks.shared.outputs import split
from checker.kit import FLOAT32_INSIDE, Fail, Mistake, case, check, expect_structure, matches
from checker.lang import t

TARGET = "MultiHeadAttention"
DROPOUT = "weights"  # the constructor takes dropout: it acts in training only, on the attention weights
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
OUTPUTS = [("out", "(B, T_q, D)"), ("attn", "(B, H, T_q, T_k)")]
# The projections: when the numbers differ, the first one whose input differs is named (dropout is no part:
# a loop over the heads calls it once per head).
PARTS = ("W_q", "W_k", "W_v", "W_o")

# Every dimension its own size (B, T_q, T_k, D, H, d_k), so a swapped or broadcast axis cannot
# pass by coincidence. D=12 is split into 3 and 4 heads. Cross-attention without a mask comes
# before the masked cases: a mistake that reads K/V from x_q can only be diagnosed there.
CASES = [
    case(1, B=2, T_q=5, T_k=5, D=12, H=3, d_k=4, kind="self", mask="none"),
    case(2, B=3, T_q=4, T_k=6, D=10, H=2, d_k=5, kind="cross", mask="none"),
    case(3, B=2, T_q=7, T_k=7, D=12, H=4, d_k=3, kind="self", mask="causal (1, 1, T_q, T_k)"),
    case(4, B=4, T_q=3, T_k=5, D=12, H=6, d_k=2, kind="cross", mask="padding (B, 1, 1, T_k)"),
    case(5, B=3, T_q=6, T_k=6, D=8, H=2, d_k=4, kind="self", mask="decoder (B, 1, T_q, T_k)"),
]
# A query that sees no key at all (checked on its own, so NaN there does not hide other mistakes).
_EMPTY_ROW = case(6, B=2, T_q=4, T_k=5, D=6, H=2, d_k=3, kind="cross", mask="(B, 1, T_q, T_k), one query sees nothing")


def init(c):
    return {"d_model": c.D, "num_heads": c.H, "dropout": 0.0}


def make_mask(c) -> torch.Tensor | None:
    # padding: lengths 2..T_k, at least one batch item really has padding (item 0), and one has none (the last)
    return masks.case_mask(c, shortest=2, one_full=True)


def inputs(c, dtype):
    g = c.generator()
    dt = getattr(torch, dtype)
    x_q = torch.randn(c.B, c.T_q, c.D, generator=g, dtype=torch.float64).to(dt)
    if c.kind == "self":
        return x_q, x_q, make_mask(c)  # self-attention: the same tensor twice
    x_kv = torch.randn(c.B, c.T_k, c.D, generator=g, dtype=torch.float64).to(dt)
    return x_q, x_kv, make_mask(c)


# ----------------------------------------------------------------------------- named mistakes


class _Knobbed(nn.Module):
    """The reference with knobs; every knob at its default gives the right answer."""

    scale, split, combine, project_out, kv_from, q_from, v_proj, axis, invert, use_mask = (
        "sqrt_dk", "transpose", "transpose", True, "x_kv", "x_q", "W_v", -1, False, True)

    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__()
        self.H, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x_q, x_kv, mask=None):
        src = {"x_q": x_q, "x_kv": x_kv}
        q_in, kv_in = src[self.q_from], src[self.kv_from]
        Q = self._split(self.W_q(q_in))
        K = self._split(self.W_k(kv_in))
        V = self._split(getattr(self, self.v_proj)(kv_in))
        d = {"sqrt_dk": math.sqrt(self.d_k), "none": 1.0, "sqrt_dmodel": math.sqrt(self.H * self.d_k),
             "dk": self.d_k}[self.scale]
        scores = Q @ K.transpose(-2, -1) / d
        visible = None if mask is None or not self.use_mask else (~mask if self.invert else mask)
        if visible is not None:
            scores = scores.masked_fill(~visible, float("-inf"))
        attn = scores.softmax(dim=self.axis)
        if visible is not None:
            attn = attn.masked_fill(~visible, 0.0)
        out = attn @ V  # (B, H, T_q, d_k)
        B, H, T, d_k = out.shape
        out = out.transpose(1, 2).reshape(B, T, H * d_k) if self.combine == "transpose" else out.reshape(B, T, H * d_k)
        return (self.W_o(out) if self.project_out else out), attn

    def _split(self, x):
        B, T, D = x.shape
        if self.split == "transpose":
            return x.view(B, T, self.H, self.d_k).transpose(1, 2)
        return x.view(B, self.H, T, self.d_k)  # the wrong way: heads made of whole rows


def _variant(**knobs):
    return type("Mistake", (_Knobbed,), knobs)


MISTAKES = [
    Mistake("missing scale", _variant(scale="none"),
            "your output equals attention without the 1/√d_k scale: divide the scores by math.sqrt(d_k), d_k = d_model // num_heads"),
    Mistake("scale by sqrt(d_model)", _variant(scale="sqrt_dmodel"),
            "your output equals attention scaled by 1/√d_model: scale by 1/√d_k, the size of ONE head (d_model // num_heads)"),
    Mistake("split without transpose", _variant(split="view"),
            "your heads are split with x.view(B, H, T, d_k) directly, which cuts the sequence into blocks instead of "
            "cutting each vector into heads: use x.view(B, T, H, d_k).transpose(1, 2)"),
    Mistake("missing output projection", _variant(project_out=False),
            "your output equals the concatenated heads without the output projection: apply self.W_o at the end"),
    Mistake("K/V from x_q", _variant(kv_from="x_q"),
            "in cross-attention your keys and values come from x_q: K = W_k(x_kv) and V = W_v(x_kv); only Q comes from x_q"),
    Mistake("Q from x_kv", _variant(q_from="x_kv", kv_from="x_q"),
            "your queries come from x_kv and your keys/values from x_q: Q = W_q(x_q), K = W_k(x_kv), V = W_v(x_kv)"),
    Mistake("mask inverted", _variant(invert=True),
            "your mask is inverted: True means 'may attend', so hide the positions where mask is False (~mask)"),
    Mistake("mask ignored", _variant(use_mask=False),
            "your output equals attention without the mask: pass the mask on to the attention and fill hidden scores with -inf"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "MultiHeadAttention is an nn.Module with W_q, W_k, W_v, W_o and forward(x_q, x_kv, mask)")
def structure(kit):
    expect_structure(kit, TARGET, module=True, params=["d_model", "num_heads", "dropout"],
                     forward=["x_q", "x_kv", "mask"], init=init(CASES[0]))
    expect_structure(kit, TARGET, module=True, init=init(CASES[1]))  # D=10, H=2: d_k is not hard-coded


@check("masking", "hidden keys get exactly zero weight in every head")
def hidden_keys_zero(kit):
    for c in CASES:
        args = kit.inputs(c)
        if args[2] is not None:
            _, attn = _pair(kit.user(args, case=c), c)
            shared.scores_returned(c, attn, _pair(kit.reference(args, case=c), c)[1], args[2], c.d_k, attn=True)
            shared.hidden_keys_get_zero(c, attn, args[2])


@check("masking", "in causal self-attention, position i uses no input after i")
def causal(kit):
    c = CASES[2]
    x, _, mask = kit.inputs(c)
    shared.no_future_leak(c, lambda x: _pair(kit.user((x, x, mask), case=c), c)[0], x)


@check("masking", "a query with no visible key gets zero weights (its output is W_o's bias)", followup=True)
def fully_hidden_row(kit):
    c = _EMPTY_ROW
    args = kit.inputs(c)
    out, attn = _pair(kit.user(args, case=c), c)
    shared.blind_query_gets_zero(c, out, attn, kit.reference(args, case=c)[0])


@check("masking", "scores near -57000 with a padding mask: hidden keys still get zero weight in every head",
       followup=True)
def very_negative_scores(kit):
    # GPT-2 fills hidden scores with -1e4: right while the scores stay far above it, wrong once they do not. The
    # contract says hidden keys get zero weight whatever the scores, so a miss is the interviewer's next question.
    c = CASES[3]
    args = kit.inputs(c)
    if not matches(_pair(kit.user(args, case=c), c)[1], _pair(kit.reference(args, case=c), c)[1], FLOAT32_INSIDE):
        return  # wrong on ordinary scores already: the core checks say how, and the fill is not the question
    _, attn = _pair(kit.user(args, case=c, state=_scores_near_minus_57000(kit.state(c, "float64"), c)), c)
    shared.very_negative_verdict(c, attn, args[2])


def _scores_near_minus_57000(state, c):
    """The weights with feature 0 of every head's query fixed at a and of its key at -a (W_q and W_k rows zeroed, the
    biases set): every score is (-a² + a few) / √d_k, near -57000."""
    a = math.sqrt(57000.0 * math.sqrt(c.d_k))
    rows = torch.arange(c.H) * c.d_k
    for name, value in (("W_q", a), ("W_k", -a)):
        state[f"{name}.weight"][rows] = 0.0
        state[f"{name}.bias"][rows] = value
    return state


@check("properties", "dropout acts on the softmax weights, not on the scores: in training each weight is kept, "
                     "zeroed or scaled by 1/(1-p)")
def dropout_after_softmax(kit):
    c = CASES[3]
    args, dropout = kit.inputs(c), {**init(c), "dropout": 0.5}
    _, plain = _pair(kit.user(args, case=c, init=dropout), c)
    _, trained = _pair(kit.user(args, case=c, init=dropout, train=True), c)
    # attn returned before dropout (the reference) or after it (the Annotated Transformer): both are accepted
    close = [torch.isclose(trained, want, rtol=1e-9, atol=1e-12) for want in (plain, 0 * plain, 2 * plain)]
    odd = ~(close[0] | close[1] | close[2])
    if odd.any():
        b, h, i, j = odd.nonzero()[0].tolist()
        raise Fail(t("{label}, training mode, dropout=0.5: attn[{b}, {h}, {i}, {j}] = {got:.4g} is neither the eval-mode "
                     "weight {want:.4g}, nor 0, nor twice it: dropout reaches the weights through the softmax, so it "
                     "acts on the scores. Drop out the weights after softmax: self.dropout(weights) @ V", label=c.label,
                     b=b, h=h, i=i, j=j, got=trained[b, h, i, j].item(), want=plain[b, h, i, j].item()),
                   t("dropout in the wrong place: on the scores before the softmax, not on the weights after it"))


def _pair(value, c):
    return split(value, c, ("out", "attn"), out=((c.B, c.T_q, c.D), "(B, T_q, D)"),
                 attn=((c.B, c.H, c.T_q, c.T_k), "(B, H, T_q, T_k)"))
