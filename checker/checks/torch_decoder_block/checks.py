"""Hidden checks: the Decoder Block tutorial's decoder-only block (SimpleDecoder): causal + padding mask, post-norm, 4x FFN."""

import math

import torch
from torch import nn

from checker.checks.child.layers import train_with_only
from checker.checks.shared import masks
from checker.kit import (Fail, Mistake, UserError, case, check, dropout_elsewhere, dropout_missing, expect_structure,
                         matches)
from checker.lang import t

TARGET = "SimpleDecoder"
DEVICE = True  # masks or positions are built inside: they must follow the inputs' device
DROPOUT = True  # the constructor takes dropout: check it acts in training only
OUTPUTS = [("output", "(B, T, D)")]
# Its sub-modules: when the numbers differ, the first one whose input differs is named.
PARTS = ("q_proj", "k_proj", "v_proj", "o_proj", "layernorm_att", "up_proj", "down_proj", "layernorm_ffn")

# Every dimension its own size (B, T, D, H, d_k). Case 1 has no pad_mask (the causal mask alone);
# cases 2 and 3 pad on the right, so every query still sees at least itself.
CASES = [
    case(1, B=2, T=5, D=12, H=3, d_k=4, pad="none"),
    case(2, B=3, T=6, D=8, H=2, d_k=4, pad="right"),
    case(3, B=4, T=7, D=10, H=5, d_k=2, pad="right"),
    case(5, B=2, T=9, D=12, H=3, d_k=4, pad="none"),  # case 1's module on a longer input: nothing kept between calls
    case(6, B=2, T=5, D=12, H=3, d_k=4, pad="right"),  # and on padded input of case 1's length
]
# Batch item 1 starts with two PADs: queries 0 and 1 see no key at all. Beyond the textbook answer
# (the Decoder Block tutorial's -1e20 gives such a row a uniform average, -inf alone NaN), so a follow-up, held apart.
_EMPTY_ROWS = case(4, B=3, T=5, D=12, H=2, d_k=6, pad="left in batch item 1: PAD at positions 0 and 1")


def init(c):
    return {"hidden_dim": c.D, "nums_head": c.H, "dropout": 0.0}


def make_pad_mask(c) -> torch.Tensor | None:
    """(B, T) bool, True = real token; None for no padding."""
    if c.pad == "none":
        return None
    g = c.generator(salt=1)
    lengths = torch.randint(2, c.T + 1, (c.B,), generator=g)
    lengths[0] = c.T - 2  # at least one batch item really has padding ...
    lengths[-1] = c.T  # ... and one has none
    mask = torch.arange(c.T) < lengths[:, None]  # (B, T): right padding
    if c.pad.startswith("left"):
        mask[1] = torch.arange(c.T) >= 2  # batch item 1: PAD, PAD, real, real, ...
    return mask


def inputs(c, dtype):
    g = c.generator()
    X = torch.randn(c.B, c.T, c.D, generator=g, dtype=torch.float64).to(getattr(torch, dtype))
    return X, make_pad_mask(c)


# ----------------------------------------------------------------------------- named mistakes


class _Knobbed(nn.Module):
    """SimpleDecoder with knobs; every knob at its default gives the right answer."""

    causal, pad, fill, scale, norm, ffn_residual, split = (
        "tril", "keys", "-inf+zero", "head_dim", "post", "H", "transpose")
    # Where each dropout acts (training only): drop_att on "weights" (right), the attention's "output" (o_proj's,
    # before the add), the block's "input" X, the attention's "reads" (q/k/v_proj read drop(X), the residual X),
    # the residual "sum" or the "normed" sum; drop_ffn on the FFN's "output" (right), its "hidden" state
    # (act_fn's output), its "reads" (up_proj reads drop(H)), the residual "sum" or the "normed" sum.
    att_drop, ffn_drop = "weights", "output"
    twice = None  # a sublayer's whole block (sublayer, residual, norm) run again on its own output: "attention", "ffn"

    def __init__(self, hidden_dim, nums_head, dropout=0.0):
        super().__init__()
        self.H, self.d_k = nums_head, hidden_dim // nums_head
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (nn.Linear(hidden_dim, hidden_dim) for _ in range(4))
        self.layernorm_att = nn.LayerNorm(hidden_dim, eps=1e-5)
        self.up_proj = nn.Linear(hidden_dim, 4 * hidden_dim)
        self.down_proj = nn.Linear(4 * hidden_dim, hidden_dim)
        self.layernorm_ffn = nn.LayerNorm(hidden_dim, eps=1e-5)
        self.drop_att, self.drop_ffn = nn.Dropout(dropout), nn.Dropout(dropout)

    def _at(self, where, knob, x, drop):
        return drop(x) if knob == where else x

    def _mask(self, X, pad_mask):
        T = X.size(1)
        ones = torch.ones(T, T, dtype=torch.bool)
        causal = {"tril": ones.tril(), "strict": ones.tril(-1), "upper": ones.triu(), "none": ones,
                  "only without pad": ones.tril()}[self.causal]
        if pad_mask is None:
            return causal
        if self.causal == "only without pad":  # the Decoder Block tutorial's trap: the causal mask lives in the else branch
            causal = ones
        pad = {"keys": pad_mask[:, None, None, :], "queries": pad_mask[:, None, :, None],
               "inverted": ~pad_mask[:, None, None, :],
               "ignored": torch.ones_like(pad_mask)[:, None, None, :]}[self.pad]
        return causal & pad

    def _split(self, x):
        B, T, _ = x.shape
        if self.split == "transpose":
            return x.view(B, T, self.H, self.d_k).transpose(1, 2)
        return x.view(B, self.H, T, self.d_k)  # heads made of whole rows

    def _attention(self, X, mask):
        B, T, D = X.shape
        X = self._at("reads", self.att_drop, X, self.drop_att)
        Q, K, V = self._split(self.q_proj(X)), self._split(self.k_proj(X)), self._split(self.v_proj(X))
        divisor = {"head_dim": math.sqrt(self.d_k), "hidden_dim": math.sqrt(D), "none": 1.0}[self.scale]
        scores = Q @ K.transpose(-2, -1) / divisor
        if self.fill == "-1e20":  # the Decoder Block tutorial: no fix, a row that sees nothing turns uniform
            weights = scores.masked_fill(~mask, -1e20).softmax(-1)
        elif self.fill == "-inf":  # no fix: a row that sees nothing turns NaN
            weights = scores.masked_fill(~mask, float("-inf")).softmax(-1)
        else:
            weights = scores.masked_fill(~mask, float("-inf")).softmax(-1).masked_fill(~mask, 0.0)
        weights = self._at("weights", self.att_drop, weights, self.drop_att)
        out = self.o_proj((weights @ V).transpose(1, 2).reshape(B, T, D))
        return self._at("output", self.att_drop, out, self.drop_att)

    def _ffn(self, X):
        X = self._at("reads", self.ffn_drop, X, self.drop_ffn)
        hidden = self._at("hidden", self.ffn_drop, torch.relu(self.up_proj(X)), self.drop_ffn)
        return self._at("output", self.ffn_drop, self.down_proj(hidden), self.drop_ffn)

    def forward(self, X, pad_mask=None):
        mask = self._mask(X, pad_mask)
        if self.norm == "pre":
            H = X + self._attention(self.layernorm_att(X), mask)
            return H + self._ffn(self.layernorm_ffn(H))
        X = self._at("input", self.att_drop, X, self.drop_att)
        H = self.layernorm_att(self._at("sum", self.att_drop, X + self._attention(X, mask), self.drop_att))
        H = self._at("normed", self.att_drop, H, self.drop_att)
        if self.twice == "attention":
            H = self.layernorm_att(H + self._attention(H, mask))
        out = (H if self.ffn_residual == "H" else X) + self._ffn(H)
        out = self.layernorm_ffn(self._at("sum", self.ffn_drop, out, self.drop_ffn))
        if self.twice == "ffn":
            out = self.layernorm_ffn(out + self._ffn(out))
        return self._at("normed", self.ffn_drop, out, self.drop_ffn)


def _variant(**knobs):
    return type("Mistake", (_Knobbed,), {k.replace(" ", "_"): v for k, v in knobs.items()})


_DIAGONAL = ("your position i cannot see itself: the diagonal of your causal mask is hidden. Query i sees keys 0..i: "
             "torch.ones(T, T).tril() (diagonal=0), not tril(-1) or ~triu(0)")

MISTAKES = [
    Mistake("causal mask only without padding", _variant(causal="only without pad"),
            "when pad_mask is given your block drops the causal mask (the Decoder Block tutorial's else-branch trap): the causal mask "
            "applies always; with padding, combine both: causal & pad_mask[:, None, None, :]"),
    Mistake("no causal mask", _variant(causal="none"),
            "your output equals the block without the causal mask: position i must see only keys 0..i (.tril())"),
    Mistake("diagonal hidden, -inf", _variant(causal="strict", fill="-inf"), _DIAGONAL),
    Mistake("diagonal hidden, -1e20", _variant(causal="strict", fill="-1e20"), _DIAGONAL),
    Mistake("padding on the query axis", _variant(pad="queries"),
            "your padding mask hides PAD queries instead of PAD keys: it belongs on the last (key) axis, "
            "pad_mask[:, None, None, :], not pad_mask[:, None, :, None]"),
    Mistake("padding inverted", _variant(pad="inverted"),
            "your padding mask is inverted: pad_mask is True at real tokens, so hide the keys where it is False"),
    Mistake("pre-norm", _variant(norm="pre"),
            "your output equals the pre-norm block X + sublayer(LayerNorm(X)): this block is post-norm like the Decoder Block tutorial, "
            "LayerNorm(X + sublayer(X))"),
    Mistake("FFN residual from the block input", _variant(ffn_residual="X"),
            "your FFN residual adds the block's input X: add the FFN's own input, layernorm_ffn(H + ffn(H)) with "
            "H = layernorm_att(X + attention(X))"),
    Mistake("scale by sqrt(hidden_dim)", _variant(scale="hidden_dim"),
            "your scores are scaled by 1/√hidden_dim: scale by 1/√head_dim, the size of one head"),
    Mistake("missing scale", _variant(scale="none"),
            "your output equals attention without the 1/√head_dim scale: divide the scores by math.sqrt(head_dim)"),
    Mistake("split without transpose", _variant(split="view"),
            "your heads are split with .view(B, H, T, head_dim) directly, which cuts the sequence into blocks: "
            "use .view(B, T, H, head_dim).transpose(1, 2)"),
    Mistake("attention sublayer twice", _variant(twice="attention"),
            "your block runs the attention sublayer twice, H = layernorm_att(H + attention(H)) one more time on its "
            "own output: each sublayer runs once (a GPT stacks blocks, the block does not repeat itself)"),
    Mistake("FFN sublayer twice", _variant(twice="ffn"),
            "your block runs the FFN sublayer twice, out = layernorm_ffn(out + ffn(out)) one more time on its own "
            "output: each sublayer runs once (a GPT stacks blocks, the block does not repeat itself)"),
]


# Where a dropout may sit instead of the contract's place, each with what to do. Tried in training mode with only
# that dropout on and torch's seed fixed: a placement that gives the user's output seed for seed is a fact.
_PLACEMENTS = {
    "drop_att": [
        ("output", "your drop_att acts on the attention sublayer's output (o_proj's result) before the residual add, "
                   "as the Annotated Transformer's SublayerConnection does; this block follows the Decoder Block tutorial: drop_att acts "
                   "on the attention weights after the softmax, drop_att(weights) @ V"),
        ("input", "your drop_att acts on the block's input X, so the residual and the attention both read a dropped-out "
                  "X; the input itself is never dropped out: drop_att acts on the attention weights after the softmax, "
                  "drop_att(weights) @ V"),
        ("reads", "your drop_att acts on the attention's input (q_proj, k_proj and v_proj read drop_att(X)): drop_att "
                  "acts on the attention weights after the softmax, drop_att(weights) @ V"),
        ("sum", "your drop_att acts on the residual sum X + attention(X), before layernorm_att; the residual itself is "
                "never dropped out: drop_att acts on the attention weights after the softmax, drop_att(weights) @ V"),
        ("normed", "your drop_att acts on layernorm_att's output, after the Add & Norm: drop_att acts on the attention "
                   "weights after the softmax, drop_att(weights) @ V"),
    ],
    "drop_ffn": [
        ("hidden", "your drop_ffn acts on the FFN's hidden state act_fn(up_proj(H)), before down_proj (where "
                   "nn.TransformerEncoderLayer puts its first dropout); this block has one dropout in the FFN "
                   "sublayer, on its output before the residual add: H + drop_ffn(down_proj(act_fn(up_proj(H))))"),
        ("reads", "your drop_ffn acts on the FFN's input (up_proj reads drop_ffn(H)): drop_ffn acts on the FFN's output "
                  "before the residual add, H + drop_ffn(down_proj(act_fn(up_proj(H))))"),
        ("sum", "your drop_ffn acts on the residual sum H + ffn(H), before layernorm_ffn; the residual itself is never "
                "dropped out: drop_ffn acts on the FFN's output before the residual add, "
                "H + drop_ffn(down_proj(act_fn(up_proj(H))))"),
        ("normed", "your drop_ffn acts on layernorm_ffn's output, the block's output: drop_ffn acts on the FFN's output "
                   "before the residual add, H + drop_ffn(down_proj(act_fn(up_proj(H))))"),
    ],
}
_KNOB = {"drop_att": "att_drop", "drop_ffn": "ffn_drop"}


# ----------------------------------------------------------------------------- checks


@check("structure", "SimpleDecoder is an nn.Module with the Decoder Block tutorial's submodules and forward(X, pad_mask)")
def structure(kit):
    try:
        expect_structure(kit, TARGET, module=True, params=["hidden_dim", "nums_head", "dropout"],
                         forward=["X", "pad_mask"], init=init(CASES[0]))
        expect_structure(kit, TARGET, module=True, init=init(CASES[2]))  # D=10, H=5: nothing hard-coded
    except Fail as fail:
        text, diagnosis = fail.message, fail.diagnosis
        # the layer's own FFN against the reference's, read from the layer (never from the drawn message)
        try:
            params = kit.inspect(TARGET, init(CASES[0]))["parameters"] if kit.inspect(TARGET)["is_module"] else {}
        except UserError:
            raise fail from None
        wanted = {n: list(p.shape) for n, p in getattr(kit.solution, TARGET)(**init(CASES[0])).named_parameters()}
        if params and any(params.get(n) != wanted[n] for n in wanted if n.startswith(("up_proj.", "down_proj."))):
            D = CASES[0].D
            if params.get("up_proj.weight", [4 * D, D]) != [4 * D, D] \
                    or params.get("down_proj.weight", [D, 4 * D]) != [D, 4 * D]:
                diagnosis = t("your FFN has the wrong width: it widens 4x (the Decoder Block tutorial), up_proj = "
                              "nn.Linear(hidden_dim, 4 * hidden_dim) and down_proj back to hidden_dim")
            else:
                text += t(". The FFN widens 4x (the Decoder Block tutorial): up_proj = nn.Linear(hidden_dim, 4 * hidden_dim)")
        raise Fail(text, diagnosis) from None


@check("masking", "without padding, position i uses no position after i")
def causal_without_padding(kit):
    _causal(kit, CASES[0], t(" Apply the causal mask torch.ones(T, T).tril() (True = may attend)."))


@check("masking", "with a pad_mask the block is still causal")
def causal_with_padding(kit):
    _causal(kit, CASES[1], t(" When pad_mask is given the causal mask still applies (the Decoder Block tutorial's else-branch trap): "
                             "combine both, causal & pad_mask[:, None, None, :]"))


@check("masking", "the content of PAD positions changes no real token's output")
def padding_invariance(kit):
    c = CASES[2]
    X, pad_mask = kit.inputs(c)
    out = _output(kit.user((X, pad_mask), case=c), c)
    _no_nan(out, c)
    changed = X.clone()
    noise = 5.0 + torch.randn(X.shape, generator=c.generator(salt=5), dtype=X.dtype)
    changed[~pad_mask] += noise[~pad_mask]  # change only the PAD positions
    out2 = _output(kit.user((changed, pad_mask), case=c), c)
    real = pad_mask
    if not torch.allclose(out[real], out2[real], rtol=1e-9, atol=1e-10):
        b, pos = (~torch.isclose(out, out2, rtol=1e-9, atol=1e-10) & real[..., None]).any(-1).nonzero()[0].tolist()
        raise Fail(t("{label}: changing the PAD positions of X changed the output of the real token at batch {b}, "
                     "position {pos}: PAD keys must be hidden from every query, causal & pad_mask[:, None, None, :] "
                     "(pad_mask is True at real tokens)", label=c.label, b=b, pos=pos))


def _why() -> str:
    return t("Follow-up: what should a query that may see no key return (a left-padded batch puts a PAD before the "
             "first real token)? Its output is never used for a real token, but a NaN there spreads to the whole batch "
             "through the loss and its gradients, and a uniform average reads the future; the reference gives such a "
             "row zero weights, e.g. weights.masked_fill(~mask, 0.0) after softmax, so its attention output is "
             "o_proj's bias")


@check("masking", "a query that sees no key (a PAD at position 0) gets zero attention: o_proj's bias", followup=True)
def empty_rows(kit):
    c = _EMPTY_ROWS
    args = kit.inputs(c)
    out = _output(kit.user(args, case=c), c)
    expected = kit.reference(args, case=c)
    rows = out[1, :2]
    others = torch.ones(c.B, c.T, dtype=torch.bool)
    others[1, :2] = False
    if not matches(out[others], expected[others]):
        return  # wrong on rows that see keys: the core checks say what is wrong
    if torch.isnan(rows).any():
        raise Fail(t("{label}: batch item 1, positions 0 and 1 are PAD, so queries 0 and 1 see no key; their output "
                     "came out NaN (softmax of a row of -inf is 0/0). {why}", label=c.label, why=_why()))
    if not matches(rows, expected[1, :2]):
        raise Fail(t("{label}: batch item 1 starts with two PADs, so queries 0 and 1 see no key; their output differs "
                     "from the reference: with -1e20 (the Decoder Block tutorial's fill) such a row turns into a uniform average over "
                     "every key, future included. {why}", label=c.label, why=_why()))


@check("properties", "in training, with one dropout on and torch's seed fixed, drop_att drops out the attention "
                    "weights and drop_ffn the FFN output")
def dropout_placement(kit):
    c = CASES[1]
    args, dropout = kit.inputs(c), {**init(c), "dropout": 0.5}
    state = kit.state(c, "float64")
    for name, placements in _PLACEMENTS.items():
        got = kit.drive(train_with_only, TARGET, dropout, state, args, [name])
        if not isinstance(got, torch.Tensor) or matches(got, _trained(c, state, args, name)):
            continue  # the contract's place (or another form: the shape checks say so)
        # Another draw (a second dropout, F.dropout, a loop over heads) matches no placement: nothing is stated.
        for where, explain in placements:
            if matches(got, _trained(c, state, args, name, **{_KNOB[name]: where})):
                raise Fail(t("{label}, training mode, dropout=0.5, only {name} on, from torch.manual_seed(0): your "
                             "output equals, draw for draw, the reference block with {name} moved to another tensor",
                             label=c.label, name=name), t(explain))


def _trained(c, state, args, active, **knobs):
    """The block (with knobs) in training mode with only the dropout `active` on, from torch.manual_seed(0), as
    train_with_only runs the user's: the same tensor dropped out draws the same mask."""
    module = _variant(**knobs)(**{**init(c), "dropout": 0.5}).double()
    module.load_state_dict(state)
    for name in _KNOB:
        getattr(module, name).p = 0.5 if name == active else 0.0
    with torch.random.fork_rng(), torch.no_grad():
        torch.manual_seed(0)
        return module.train()(*args)


@check("properties", "in training, drop_att acts on the attention and drop_ffn on the FFN output")
def both_dropouts_act(kit):
    c = CASES[1]
    args, dropout = kit.inputs(c), {**init(c), "dropout": 0.5}
    for off, name, where in (("down_proj", "drop_att", "the attention weights"),
                             ("v_proj", "drop_ffn", "the FFN output")):
        state = kit.state(c, "float64")
        state[f"{off}.weight"] = torch.zeros_like(state[f"{off}.weight"])  # switch the other sublayer's
        state[f"{off}.bias"] = torch.zeros_like(state[f"{off}.bias"])  # contribution off
        trained = _output(kit.user(args, case=c, init=dropout, state=state, train=True), c)
        if matches(trained, kit.reference(args, case=c, init=dropout, state=state)):
            raise Fail(t("{label}: with dropout=0.5 in training mode and {off} set to zero, the output equals the "
                         "result without dropout: apply self.{name} to {where}", label=c.label, off=off, name=name,
                         where=t(where)),
                       dropout_missing())


@check("properties", "dropout hits the two sublayers only: with o_proj and down_proj silenced, training changes nothing")
def dropout_nowhere_else(kit):
    c = CASES[1]
    args, dropout = kit.inputs(c), {**init(c), "dropout": 0.5}
    state = kit.state(c, "float64")
    for off in ("o_proj", "down_proj"):  # both sublayers now add exactly zero
        state[f"{off}.weight"] = torch.zeros_like(state[f"{off}.weight"])
        state[f"{off}.bias"] = torch.zeros_like(state[f"{off}.bias"])
    trained = _output(kit.user(args, case=c, init=dropout, state=state, train=True), c)
    # compared with the user's own block in eval mode: a wiring mistake is no dropout mistake
    if not matches(trained, _output(kit.user(args, case=c, init=dropout, state=state), c)):
        raise Fail(t("{label}, training mode, dropout=0.5, o_proj and down_proj set to zero (both sublayers add 0): "
                     "your output changes, so dropout hits X, a residual sum or a normalized output. drop_att acts on "
                     "the attention weights, drop_ffn on the FFN's output, both before the residual add",
                     label=c.label),
                   dropout_elsewhere())


def _causal(kit, c, advice):
    X, pad_mask = kit.inputs(c)
    out = _output(kit.user((X, pad_mask), case=c), c)
    _no_nan(out, c)
    leak = masks.future_leak(lambda X: _output(kit.user((X, pad_mask), case=c), c), (X,), (3.0,),
                             same=masks.close(1e-9, 1e-10), before=out)
    if leak:
        raise Fail(t("{label}: changing X after position {pos} changed the output at position ≤ {pos}: the future "
                     "leaks.{advice}", label=c.label, pos=leak.pos, advice=advice))


def _no_nan(out, c):
    if torch.isnan(out).any():
        b, pos = torch.isnan(out).any(-1).nonzero()[0].tolist()
        raise Fail(t("{label}: the output at batch {b}, position {pos} is NaN although every query sees at least "
                     "itself here (no PAD comes before a real token): is the diagonal of your causal mask hidden? "
                     "Query i sees keys 0..i: torch.ones(T, T).tril() (diagonal=0), not tril(-1) or ~triu(0)",
                     label=c.label, b=b, pos=pos))


def _output(value, c):
    want = (c.B, c.T, c.D)
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != want:
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        raise Fail(t("{label}: forward should return one tensor of shape (B, T, D) = {want}, got {got}",
                     label=c.label, want=want, got=got))
    return value
