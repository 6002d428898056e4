"""Hidden checks: the full Transformer (the interview tutorial): embeddings, positions, encode, decode, logits, masks from PAD."""

import math

import torch

from checker.checks.child.dropouts import dropout_rates
from checker.checks.child import transformer as fixtures
from checker.kit import DTYPES, Accepted, Convention, Fail, Mistake, case, check, compare, expect_structure
from checker.lang import t

TARGET = "Transformer"
DEVICE = True  # masks or positions are built inside: they must follow the inputs' device
DROPOUT = True  # the constructor takes dropout: check it acts in training only
OUTPUTS = [("logits", "(B, T_t, V_t)")]
# Its sub-modules (up to 4 layers a side; the cases have at most 3): the first whose input differs is named.
PARTS = ("src_embed", "tgt_embed", "pos_enc", *(f"{side}_layers.{i}" for side in ("encoder", "decoder") for i in range(4)),
         "out_proj")

# Every dimension its own size (B, T_s, T_t, D, H, d_k, d_ff, V_s, V_t; N = num_layers as well).
# Case 1 has no PAD, so mistakes that do not involve masks are diagnosed there; V_s > V_t there,
# so embedding the target with src_embed runs (and is named) instead of raising IndexError.
# Case 3 uses pad_id = 3 with token 0 a real token: a hard-coded PAD = 0 shows.
CASES = [
    case(1, B=3, T_s=7, T_t=5, D=12, H=4, d_k=3, d_ff=20, N=2, V_s=13, V_t=11, pad_id=0, padding="none"),
    case(2, B=4, T_s=6, T_t=9, D=10, H=2, d_k=5, d_ff=14, N=3, V_s=8, V_t=11, pad_id=0, padding="source and target"),
    case(3, B=2, T_s=5, T_t=6, D=12, H=4, d_k=3, d_ff=16, N=1, V_s=9, V_t=7, pad_id=3, padding="source and target"),
]
_MAX_LEN = 32


def init(c):
    return {"src_vocab": c.V_s, "tgt_vocab": c.V_t, "d_model": c.D, "num_heads": c.H, "d_ff": c.d_ff,
            "num_layers": c.N, "dropout": 0.0, "max_len": _MAX_LEN, "pad_id": c.pad_id}


def _ids(c, g, rows, length, vocab, lengths):
    """(rows, length) ids: real tokens (never pad_id; token 0 included when 0 is not PAD), then PAD."""
    real = torch.tensor([t for t in range(vocab) if t != c.pad_id])
    ids = real[torch.randint(len(real), (rows, length), generator=g)]
    if c.pad_id != 0:
        ids[0, 1] = 0  # id 0 is a real token here
    for b, n in enumerate(lengths):
        ids[b, n:] = c.pad_id
    return ids


def inputs(c, dtype):
    g = c.generator()
    if c.padding == "none":
        src_len, tgt_len = [c.T_s] * c.B, [c.T_t] * c.B
    else:  # row 0 full, the others padded; every row keeps at least two real tokens
        src_len = [c.T_s] + [int(n) for n in torch.randint(2, c.T_s, (c.B - 1,), generator=g)]
        tgt_len = [c.T_t] + [int(n) for n in torch.randint(2, c.T_t, (c.B - 1,), generator=g)]
    src = _ids(c, g, c.B, c.T_s, c.V_s, src_len)
    tgt = _ids(c, g, c.B, c.T_t, c.V_t, tgt_len)
    return src, tgt


# ----------------------------------------------------------------------------- named mistakes


class _Knobbed(fixtures.Transformer):
    """The reference with knobs (same submodules, so the same weights load); defaults are right."""

    causal, tgt_pad, enc_pad, cross_pad, invert, pad_queries, pad_zero = "tril", True, True, True, False, False, False
    scale, positions, tgt_table, memory_from, chain, softmax = False, True, "tgt_embed", "encoder", True, False

    def _mask(self, q_ids, k_ids):
        pad = 0 if self.pad_zero else self.pad_id
        q_real, k_real = ((q_ids == pad), (k_ids == pad)) if self.invert else ((q_ids != pad), (k_ids != pad))
        if self.pad_queries:  # the interview tutorial's make_pad_mask: PAD query rows hidden too
            return q_real[:, None, :, None] & k_real[:, None, None, :]
        return k_real[:, None, None, :]

    def _embed(self, table, ids):
        x = getattr(self, table)(ids)
        x = x * math.sqrt(x.size(-1)) if self.scale else x
        return self.pos_enc(x) if self.positions else x

    def _stack(self, layers, x, run):
        h = x
        for layer in layers:
            h = run(layer, h if self.chain else x)
        return h

    def encode(self, src):
        mask = self._mask(src, src) if self.enc_pad else None
        return self._stack(self.encoder_layers, self._embed("src_embed", src), lambda layer, h: layer(h, mask)[0])

    def decode(self, tgt, memory, src):
        ones = torch.ones(tgt.size(1), tgt.size(1), dtype=torch.bool)
        causal = {"tril": ones.tril(), "none": ones, "strict": ones.tril(-1), "triu": ones.triu()}[self.causal]
        tgt_mask = (self._mask(tgt, tgt) & causal) if self.tgt_pad else causal
        cross = self._mask(tgt, src) if self.cross_pad else None
        y = self._embed(self.tgt_table, tgt)
        return self._stack(self.decoder_layers, y, lambda layer, h: layer(h, memory, tgt_mask, cross)[0])

    def forward(self, src, tgt):
        memory = self.encode(src) if self.memory_from == "encoder" else self._embed("src_embed", src)
        logits = self.out_proj(self.decode(tgt, memory, src))
        return logits.softmax(-1) if self.softmax else logits


def _variant(**knobs):
    return type("Mistake", (_Knobbed,), knobs)


MISTAKES = [
    Mistake("no causal mask", _variant(causal="none"),
            "your logits equal a decoder without the causal mask, so position i sees the future: combine the target "
            "padding mask with torch.ones(T_t, T_t, dtype=torch.bool).tril()"),
    Mistake("target PAD keys visible", _variant(tgt_pad=False),
            "your decoder self-attention does not hide PAD target keys (only the causal mask): "
            "tgt_mask = (tgt != self.pad_id)[:, None, None, :] & causal"),
    Mistake("source PAD keys visible in the encoder", _variant(enc_pad=False),
            "your encoder self-attention does not hide PAD source keys: give every encoder layer "
            "src_mask = (src != self.pad_id)[:, None, None, :]"),
    Mistake("padding masks inverted", _variant(invert=True),
            "your padding masks are inverted: True must mean 'may attend', i.e. the token is NOT PAD: (ids != self.pad_id)"),
    Mistake("PAD hard-coded as 0", _variant(pad_zero=True),
            "your masks treat id 0 as PAD, but this model's pad_id is another: compare with self.pad_id"),
    Mistake("target embedded with src_embed", _variant(tgt_table="src_embed"),
            "your target ids are embedded with src_embed: embed tgt with self.tgt_embed"),
    Mistake("layers not chained", _variant(chain=False),
            "your layers are not chained: each one receives the embeddings and only the last one's output is kept; "
            "feed each layer's output to the next (x, _ = layer(x, src_mask))"),
    Mistake("softmax on the logits", _variant(softmax=True),
            "your output equals softmax(logits): return the raw scores of out_proj (cross-entropy applies log-softmax itself)"),
]


# Conventions of the sources, accepted with a note (kata check --strict fails them). Both leave every
# logit at a real (non-PAD) target position a function of the same inputs as the reference's.
CONVENTIONS = (
    Convention("embeddings scaled by √d_model (the paper)", impl=_variant(scale=True), explain=(
               "your embeddings are multiplied by √d_model before the positions are added, as the paper does "
               "(section 3.4: 'we multiply those weights by √d_model') and the Annotated Transformer's Embeddings "
               "(self.lut(x) * math.sqrt(self.d_model)). The interview tutorial and the PyTorch notebook tutorial, and this kata's reference, do not "
               "scale: x = self.pos_enc(self.src_embed(src)). Either trains; the scale sets how large the "
               "embeddings are next to the positional table, whose entries lie in [-1, 1]")),
    Convention("PAD query rows hidden too (the interview tutorial)", impl=_variant(pad_queries=True), explain=(
               "your padding masks also hide the PAD query rows, as the interview tutorial's make_pad_mask does (visible = real "
               "query AND real key): the outputs differ only at PAD positions, which the loss ignores. This kata's "
               "reference hides PAD keys only, (ids != self.pad_id)[:, None, None, :], so a PAD row attends like "
               "any other and no row is left with nothing to see")),
)


# ----------------------------------------------------------------------------- checks


@check("structure", "Transformer has src_embed, tgt_embed, pos_enc, encoder_layers, decoder_layers, out_proj")
def structure(kit):
    expect_structure(kit, TARGET, module=True,
                     params=["src_vocab", "tgt_vocab", "d_model", "num_heads", "d_ff", "num_layers", "dropout",
                             "max_len", "pad_id"],
                     forward=["src", "tgt"], init=init(CASES[0]))
    built = kit.inspect(TARGET, init(CASES[1]))
    if "pos_enc.pe" not in built["buffers"]:
        raise Fail(t("the positional table should be the buffer pos_enc.pe: create self.pos_enc = "
                     "PositionalEncoding(d_model, max_len, dropout) (one, shared by both sides); found buffers {names}",
                     names=", ".join(built["buffers"]) or t("none")))
    # A buffer saved with the weights must come from the contract's state dict; one registered with persistent=False
    # (nanoGPT's causal triangle, sliced to T) is a cache: a call of another length shows whether it changes a result.
    extra = [b for b in built.get("persistent_buffers", built["buffers"]) if b != "pos_enc.pe"]
    if extra:
        raise Fail(t("Transformer has buffers the contract does not have: {names}; build the masks in encode/decode "
                     "from the ids instead of storing them", names=", ".join(extra)))


def _state(kit, c, dtype="float64"):
    """kit.state(c, dtype), computed once per check run (it builds and perturbs a whole model)."""
    cache = kit.__dict__.setdefault("_transformer_states", {})
    if (c.id, dtype) not in cache:
        cache[c.id, dtype] = kit.state(c, dtype)
    return cache[c.id, dtype]


def _user(kit, c, args, *, shape=None, what="forward", **kw):
    """The user's output (logits unless shape says otherwise), checked to be a tensor of that shape."""
    value = kit.user(args, case=c, state=_state(kit, c), **kw)
    want = shape or (args[0].size(0), args[1].size(1), c.V_t)
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(want):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        raise Fail(t("{label}: {what} should return a tensor of shape {want}, got {got}", label=c.label, what=what,
                     want=tuple(want), got=got))
    return value


def _module(kit, c, impl=None, dtype="float64"):
    """The reference (or the convention the user's code follows, or a named mistake) with the case's weights, in eval mode."""
    followed = kit.convention.impl if kit.convention is not None else None
    module = (impl or followed or kit.solution.Transformer)(**init(c)).to(DTYPES[dtype])
    module.load_state_dict(_state(kit, c, dtype), strict=True)
    return module.eval()


def _diagnose(kit, c, method, args, got) -> str | None:
    """The mistake or change that gives the user's encode or decode; none for a model that follows an accepted
    convention, which _or_convention then compares against (a search there would cost seconds for nothing)."""
    if kit.convention is None and kit.settle() is not None:
        return None

    def run(mistake):
        with torch.no_grad():
            return getattr(_module(kit, c, mistake.impl), method)(*args)

    return kit.name_mistake(args, got, run=run)


def _or_convention(compare_all):
    """Run compare_all(kit); if it fails, adopt the first convention the user's whole model follows (on the
    logits of every case), compare again against it and name it; else the first failure stands."""
    def run(kit):
        followed = kit.convention
        try:
            compare_all(kit)
        except Fail:
            if followed is not None or kit.settle() is None:  # the search may have found it first
                raise
            compare_all(kit)
            raise Accepted(t(kit.convention.explain)) from None
    return run


@check("numerics", "encode(src) gives the reference's memory (B, T_s, D)")
def encode_matches(kit):
    _or_convention(_encode_matches)(kit)


@check("numerics", "decode(tgt, memory, src) gives the reference's hidden states (B, T_t, D)")
def decode_matches(kit):
    _or_convention(_decode_matches)(kit)


def _encode_matches(kit):
    for c in CASES:
        src, _ = kit.inputs(c)
        got = kit.user((src,), case=c, state=_state(kit, c), method="encode")
        with torch.no_grad():
            want = _module(kit, c).encode(src)
        try:
            compare(got, want, "memory", "(B, T_s, D)")
        except Fail as fail:
            raise Fail(t("{label}, encode(src): {fail}", label=c.label, fail=fail),
                       _diagnose(kit, c, "encode", (src,), got)) from None


def _decode_matches(kit):
    for c in CASES:
        src, tgt = kit.inputs(c)
        reference = _module(kit, c)
        with torch.no_grad():
            memory = reference.encode(src)
            want = reference.decode(tgt, memory, src)
        got = kit.user((tgt, memory, src), case=c, state=_state(kit, c), method="decode")
        try:
            compare(got, want, "hidden states", "(B, T_t, D)")
        except Fail as fail:
            raise Fail(t("{label}, decode(tgt, memory, src) with the reference's memory: {fail}", label=c.label,
                         fail=fail), _diagnose(kit, c, "decode", (tgt, memory, src), got)) from None


@check("masking", "causal: changing the target after position t leaves the logits at positions ≤ t unchanged")
def causal(kit):
    c = CASES[1]
    src, tgt = kit.inputs(c)
    logits = _user(kit, c, (src, tgt))
    real = torch.tensor([tok for tok in range(c.V_t) if tok != c.pad_id])
    for pos in (0, 1, c.T_t // 2, c.T_t - 2):
        changed = tgt.clone()
        later = changed[:, pos + 1:]
        changed[:, pos + 1:] = real[(torch.searchsorted(real, later.clamp(max=int(real[-1]))) + 1) % len(real)]
        after = _user(kit, c, (src, changed))
        if not torch.allclose(logits[:, : pos + 1], after[:, : pos + 1], rtol=1e-9, atol=1e-10):
            raise Fail(t("{label}: changing the target tokens after position {pos} changed the logits at positions "
                         "≤ {pos}: the decoder sees the future; its self-attention needs the causal mask (key j visible "
                         "to query i only if j <= i)", label=c.label, pos=pos))


@check("masking", "PAD: extra PAD columns appended to the source leave the logits and the memory unchanged")
def source_padding(kit):
    for c in CASES:
        src, tgt = kit.inputs(c)
        longer = torch.cat([src, torch.full((c.B, 3), c.pad_id, dtype=src.dtype)], dim=1)  # (B, T_s + 3)
        logits, logits2 = _user(kit, c, (src, tgt)), _user(kit, c, (longer, tgt))
        if not torch.allclose(logits, logits2, rtol=1e-9, atol=1e-10):
            raise Fail(t("{label}: appending 3 PAD columns to src (pad_id = {pad_id}) changed the logits: PAD source "
                         "keys must be hidden, in the encoder's self-attention and in the cross-attention "
                         "(mask (src != self.pad_id)[:, None, None, :])", label=c.label, pad_id=c.pad_id))
        memory, memory2 = (_user(kit, c, (s,), method="encode", what="encode(src)", shape=(c.B, s.size(1), c.D))
                           for s in (src, longer))
        real = src != c.pad_id
        if not torch.allclose(memory[real], memory2[:, : c.T_s][real], rtol=1e-9, atol=1e-10):
            raise Fail(t("{label}: appending 3 PAD columns to src changed encode(src) at real (non-PAD) positions: "
                         "the encoder's self-attention must hide PAD keys", label=c.label))


@check("properties", "every dropout inside the model gets the model's rate (dropout is passed on to every part)")
def dropout_reaches_every_part(kit):
    c = CASES[0]
    rate = {**init(c), "dropout": 0.3}
    got = kit.drive(dropout_rates, TARGET, rate)
    want = dropout_rates(kit.solution, TARGET, rate)
    for name, p in want.items():
        if name in got and got[name] != p:
            raise Fail(t("{label}: Transformer(..., dropout=0.3) builds {name} with p={got}: pass the model's dropout on "
                         "to every part you build, e.g. EncoderLayer(d_model, num_heads, d_ff, dropout) (the given "
                         "classes default to 0.0)", label=c.label, name=name, got=got[name]),
                       t("the model's dropout does not reach every part: {name} is built with p={got}", name=name,
                         got=got[name]))


@check("properties", "pos_enc adds the sinusoidal table and applies the model's dropout (the given PositionalEncoding)")
def positions(kit):
    c = CASES[0]
    odd = {**init(c), "d_model": 9, "num_heads": 3}  # an odd d_model: one sin column more than cos columns
    x = torch.zeros(1, _MAX_LEN, 9, dtype=torch.float64)
    got = kit.user((x,), init=odd, dtype="float64", method="pos_enc")
    with torch.no_grad():
        want = kit.solution.Transformer(**odd).double().eval().pos_enc(x)
    try:
        compare(got, want, "pos_enc(zeros)", "(1, max_len, D)")
    except Fail as fail:
        raise Fail(t("Transformer(d_model=9, num_heads=3, ...): {fail}: pos_enc must be the given "
                     "PositionalEncoding(d_model, max_len, dropout), unchanged", fail=fail)) from None
    # in training mode with dropout=0.5 every entry is either dropped (0) or kept and doubled
    dropped = kit.user((x,), init={**odd, "dropout": 0.5}, dtype="float64", method="pos_enc", train=True)
    if isinstance(dropped, torch.Tensor) and dropped.shape == want.shape:
        live = want != 0
        zeroed = float((dropped[live] == 0).double().mean())
        if not 0.3 < zeroed < 0.7 or not torch.allclose(dropped[dropped != 0], 2 * want[dropped != 0]):
            raise Fail(t("Transformer(dropout=0.5, ...) in training mode: pos_enc zeroed {zeroed:.0%} of the table: "
                         "build it as PositionalEncoding(d_model, max_len, dropout), passing the model's dropout on",
                         zeroed=zeroed))
