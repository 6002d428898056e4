"""Hidden checks: encoder and decoder stacks (the PyTorch notebook tutorial): N deep copies of a layer and a final LayerNorm.

The checker builds the layer handed to Encoder(layer, N) / Decoder(layer, N) from
checker.checks.child.layers (copies of the classes given in the stub), so a layer instance pickled
here arrives whole in the child. The loaded weights differ from layer to layer, so a stack whose
layers share one set of weights cannot pass.
"""

import copy
import inspect

import torch
from torch import nn

from checker.checks.child.layers import DecoderLayer, EncoderLayer, decoder_calls, with_own_layers
from checker.checks.child.numpy_classes import build_and_call
from checker.kit import DTYPES, Fail, Mistake, UserError, case, check, compare, describe, expect_structure, matches
from checker.lang import t

TARGET = "Encoder"
OUTPUTS = [("x", "(B, T_s, D)")]
# The Encoder's layers and final norm: when the numbers differ, the first whose input differs is named.
PARTS = (*(f"layers.{i}" for i in range(6)), "norm")

# Every dimension its own size (B, T_s, D, H, d_k, d_ff, N); N stays small (every layer is deep-copied,
# loaded and run on each call) but is at least 2 where copies must be told apart. N=1 is legal too.
CASES = [
    case(1, B=4, T_s=6, D=10, H=5, d_k=2, d_ff=7, N=3, mask="none"),
    case(2, B=3, T_s=5, D=12, H=6, d_k=2, d_ff=8, N=4, mask="padding src_mask (B, 1, 1, T_s)"),
    case(3, B=2, T_s=7, D=15, H=5, d_k=3, d_ff=4, N=1, mask="padding src_mask (B, 1, 1, T_s)"),
]
# The Decoder's cases (B, T_t, T_s, D, H, d_k, d_ff, N). Case 11 has no memory_mask, so a stack
# that hands its own stream to the cross-attention as "memory" runs and can be diagnosed there.
_DECODER_CASES = [
    case(11, B=4, T_t=5, T_s=7, D=18, H=6, d_k=3, d_ff=8, N=2, masks="causal tgt_mask, no memory_mask"),
    case(12, B=2, T_t=6, T_s=7, D=20, H=5, d_k=4, d_ff=9, N=3,
         masks="causal+padding tgt_mask (B, 1, T_t, T_t), padding memory_mask (B, 1, 1, T_s)"),
    # the contract's smallest batch: one sequence
    case(13, B=1, T_t=4, T_s=5, D=12, H=4, d_k=3, d_ff=6, N=2,
         masks="causal+padding tgt_mask (B, 1, T_t, T_t), padding memory_mask (B, 1, 1, T_s)"),
]


def init(c):
    return {"layer": _seeded(EncoderLayer, c), "N": c.N}


def decoder_init(c):
    return {"layer": _seeded(DecoderLayer, c), "N": c.N}


def _seeded(layer_class, c):
    """The layer with the same initial weights on every call: the stacks copy these weights, and Kit.state
    builds init(case) before it seeds torch, so a randomly initialised layer would change every time."""
    with torch.random.fork_rng(devices=[]):  # the CPU generator only: no accelerator is touched
        torch.manual_seed(c.id)
        return layer_class(c.D, c.H, c.d_ff)


def _real(T, B, g):
    """(B, T) bool, True = real token: right padding, one item padded, one not."""
    lengths = torch.randint(2, T + 1, (B,), generator=g)
    lengths[0], lengths[-1] = T - 2, T
    return torch.arange(T) < lengths[:, None]


def inputs(c, dtype):
    g = c.generator()
    x = torch.randn(c.B, c.T_s, c.D, generator=g, dtype=torch.float64).to(getattr(torch, dtype))
    src_mask = None if c.mask == "none" else _real(c.T_s, c.B, c.generator(salt=1))[:, None, None, :]
    return x, src_mask


def decoder_inputs(c, dtype="float64"):
    g = c.generator()
    dt = getattr(torch, dtype)
    y = torch.randn(c.B, c.T_t, c.D, generator=g, dtype=torch.float64).to(dt)
    memory = torch.randn(c.B, c.T_s, c.D, generator=g, dtype=torch.float64).to(dt)
    causal = torch.ones(c.T_t, c.T_t, dtype=torch.bool).tril().view(1, 1, c.T_t, c.T_t)
    if c.masks.startswith("causal tgt_mask,"):
        return y, memory, causal, None
    g = c.generator(salt=1)
    return y, memory, _real(c.T_t, c.B, g)[:, None, None, :] & causal, _real(c.T_s, c.B, g)[:, None, None, :]


def decoder_state(kit, c, dtype="float64"):
    """The reference Decoder's weights for this case, seeded and moved away from their init (as Kit.state)."""
    key = (id(kit.solution), c.id, dtype)
    if key not in _DECODER_STATES:  # building N layers is slow: once per case and dtype
        _DECODER_STATES[key] = _decoder_state(kit.solution, c, dtype)
    return dict(_DECODER_STATES[key])


_DECODER_STATES: dict = {}


def _decoder_state(solution, c, dtype):
    torch.manual_seed(7919 * c.id)
    module = solution.Decoder(**decoder_init(c)).to(DTYPES[dtype])
    g = c.generator(salt=17)
    with torch.no_grad():
        for p in module.parameters():
            spread = float(p.std()) if p.numel() > 1 and float(p.std()) > 0 else 1.0
            p.add_(torch.randn(p.shape, generator=g, dtype=torch.float64).to(p.dtype) * 0.3 * spread)
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


# ----------------------------------------------------------------------------- named mistakes


class _KnobbedEncoder(nn.Module):
    """The reference Encoder with knobs; every knob at its default gives the right answer."""

    norm_at, chain, pass_mask = "end", True, True

    def __init__(self, layer, N):
        super().__init__()
        self.layers = nn.ModuleList([copy.deepcopy(layer) for _ in range(N)])
        self.norm = nn.LayerNorm(layer.self_attn.d_model)

    def _run(self, layer, x, x0, *rest):
        return layer(x if self.chain else x0, *rest)

    def forward(self, x, src_mask=None):
        mask = src_mask if self.pass_mask else None
        x0 = x = self.norm(x) if self.norm_at == "start" else x
        for layer in self.layers:
            x, _ = self._run(layer, x, x0, mask)
            x = self.norm(x) if self.norm_at == "every layer" else x
        return self.norm(x) if self.norm_at == "end" else x


class _KnobbedDecoder(_KnobbedEncoder):
    memory_from, pass_tgt_mask = "memory", True

    def forward(self, y, memory, tgt_mask=None, memory_mask=None):
        tgt_mask = tgt_mask if self.pass_tgt_mask else None
        memory_mask = memory_mask if self.pass_mask else None
        y0 = y
        for i, layer in enumerate(self.layers):
            mem = memory if self.memory_from == "memory" or i == 0 else y
            y, _, _ = self._run(layer, y, y0, mem, tgt_mask, memory_mask)
            y = self.norm(y) if self.norm_at == "every layer" else y
        return self.norm(y) if self.norm_at == "end" else y


def _variant(base, **knobs):
    return type("Mistake", (base,), knobs)


_NO_FINAL_NORM = "your output equals the stack without the final LayerNorm: return self.norm(x) after the last layer"
_NORM_EVERY_LAYER = ("your output equals the stack with self.norm applied after every layer: each layer already "
                     "normalises its own output (post-LN); the stack adds ONE LayerNorm, after the last layer")
_NOT_CHAINED = ("every layer of your stack reads the stack's input: each layer must read the previous layer's "
                "output, x, _ = layer(x, ...)")
_NORM_FIRST = "your stack applies self.norm to its input instead of its output: return self.norm(x) after the loop"

MISTAKES = [
    Mistake("no final norm", _variant(_KnobbedEncoder, norm_at="none"), _NO_FINAL_NORM),
    Mistake("norm after every layer", _variant(_KnobbedEncoder, norm_at="every layer"), _NORM_EVERY_LAYER),
    Mistake("norm on the input", _variant(_KnobbedEncoder, norm_at="start"), _NORM_FIRST),
    Mistake("layers not chained", _variant(_KnobbedEncoder, chain=False), _NOT_CHAINED),
]

_DECODER_MISTAKES = [
    Mistake("no final norm", _variant(_KnobbedDecoder, norm_at="none"), _NO_FINAL_NORM.replace("norm(x)", "norm(y)")),
    Mistake("norm after every layer", _variant(_KnobbedDecoder, norm_at="every layer"), _NORM_EVERY_LAYER),
    Mistake("layers not chained", _variant(_KnobbedDecoder, chain=False),
            _NOT_CHAINED.replace("x, _ = layer(x, ...)", "y, _, _ = layer(y, memory, ...)")),
    Mistake("memory only to the first layer", _variant(_KnobbedDecoder, memory_from="y"),
            "only your first decoder layer reads the encoder memory; the others cross-attend to the decoder's own "
            "stream: pass the same memory to every layer, y, _, _ = layer(y, memory, tgt_mask, memory_mask)"),
    Mistake("tgt_mask not passed", _variant(_KnobbedDecoder, pass_tgt_mask=False),
            "your output equals the stack without tgt_mask: pass it to every layer (the causal mask)"),
    Mistake("memory_mask not passed", _variant(_KnobbedDecoder, pass_mask=False),
            "your output equals the stack without memory_mask: pass it to every layer"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "Encoder and Decoder hold N independent deep copies of the layer and a final norm")
def structure(kit):
    for target, forward, c, make in (("Encoder", ["x", "src_mask"], CASES[0], init),
                                     ("Decoder", ["y", "memory", "tgt_mask", "memory_mask"], _DECODER_CASES[0],
                                      decoder_init)):
        expect_structure(kit, target, module=True, params=["layer", "N"], forward=forward)
        built = kit.inspect(target, make(c))
        params = built["parameters"]
        first = [n for n in params if n.startswith("layers.0.")]
        if not first:
            raise Fail(t("{target}(layer, N={N}) has no parameter layers.0.*", target=target, N=c.N),
                       t("keep the copies in self.layers = nn.ModuleList([copy.deepcopy(layer) for _ in range(N)]) (a "
                         "plain Python list hides them from .parameters() and state_dict())"))
        missing = [i for i in range(1, c.N) if f"layers.{i}.{first[0][len('layers.0.'):]}" not in params]
        if missing:
            raise Fail(t("{target}(layer, N={N}): layers {layers} have no weights of their own", target=target,
                         N=c.N, layers=", ".join(map(str, missing))),
                       t("the same layer object is used N times (so all layers share one set of weights), or fewer "
                         "than N layers are built. Make N independent copies: nn.ModuleList([copy.deepcopy(layer) "
                         "for _ in range(N)])"))
        shared = _layers_sharing_the_template(kit, target, make(c), first[0][len("layers.0."):])
        if shared:
            layers = ", ".join(f"self.layers[{i}]" for i in shared)
            raise Fail(t("{target}(layer, N={N}): the layer passed in and {layers} hold the same tensors: the stack "
                         "did not copy it", target=target, N=c.N, layers=layers),
                       t("the template you were given is itself a layer of your stack (or shares its tensors with "
                         "one): training the stack changes the caller's layer, and two stacks built from one template "
                         "share that layer. Copy it N times and keep none of it: nn.ModuleList([copy.deepcopy(layer) "
                         "for _ in range(N)])"))
        if "norm.weight" not in params:
            raise Fail(t("{target} has no parameter norm.weight: add the final LayerNorm, "
                         "self.norm = nn.LayerNorm(d_model) with d_model = layer.self_attn.d_model", target=target))
        expect_structure(kit, target, module=True, init=make(c))
        expect_structure(kit, target, module=True, init=make(CASES[2] if target == "Encoder" else _DECODER_CASES[1]))


def _layers_sharing_the_template(kit, target: str, init: dict, name: str) -> list[int]:
    """The indices i whose layers.i.<name> is the template's own tensor (the same storage), in the child.

    The layer in init and its parameter travel in one request, so they arrive as one object there: the
    stack's layer i holds the caller's tensor exactly when layers.i.<name>.is_set_to(that parameter)."""
    template = init["layer"]
    try:
        param = template.get_parameter(name)
    except AttributeError:
        return []
    shared = []
    for i in range(init["N"]):
        try:
            reply = kit.drive(build_and_call, target, init, {}, (param,), "is_set_to", f"layers.{i}.{name}")
        except UserError:
            return []  # a stack laid out otherwise: the structure checks above and below say what is wrong
        if reply.get("output") is True:
            shared.append(i)
    return shared


@check("shapes", "Encoder and Decoder unpack the tuples the layers return")
def unpack_layer_outputs(kit):
    e, d = CASES[0], _DECODER_CASES[0]
    calls = (("Encoder", e, lambda: kit.user(inputs(e, "float64"), case=e)),
             ("Decoder", d, lambda: kit.user(decoder_inputs(d), target="Decoder", init=decoder_init(d),
                                             state=decoder_state(kit, d))))
    for target, c, call in calls:
        try:
            value = call()
        except UserError as err:
            if "tuple" in str(err):
                raise Fail(t("{label}: your {target} raised {err}", label=c.label, target=target, err=err),
                           t("the given layers return tuples, (x, self_weights) and (y, self_weights, cross_weights) "
                             "as in the interview tutorial (the PyTorch notebook tutorial's layers return a tensor): keep the first item, x, _ = "
                             "layer(x, src_mask)")) from None
            raise
        if isinstance(value, (tuple, list)):
            raise Fail(t("{label}: {target}.forward returned {got}; it returns one tensor: unpack the layers' tuples "
                         "(x, _ = layer(x, src_mask)) and return self.norm(x)", label=c.label, target=target,
                         got=describe(value)))


@check("masking", "Encoder: the content of PAD source positions changes no real position's output")
def encoder_padding_invariance(kit):
    c = CASES[1]
    x, src_mask = kit.inputs(c)
    out = _tensor(kit.user((x, src_mask), case=c), c)
    changed = x.clone()
    pad = ~src_mask[:, 0, 0, :]  # (B, T_s) True at PAD
    changed[pad] += 5.0 + torch.randn(changed[pad].shape, generator=c.generator(salt=5), dtype=x.dtype)
    out2 = _tensor(kit.user((changed, src_mask), case=c), c)
    if not torch.allclose(out[~pad], out2[~pad], rtol=1e-9, atol=1e-10):
        raise Fail(t("{label}: changing x at PAD positions changed the output at real positions: pass src_mask to "
                     "every layer, x, _ = layer(x, src_mask)", label=c.label))


def _decoder_layer_calls(kit, names: tuple, order: bool) -> None:
    """Each decoder layer's call: (order) each runs once, in order; and each received the Decoder's own names."""
    signature = inspect.signature(DecoderLayer.forward)
    for c in _DECODER_CASES:
        args = decoder_inputs(c)
        calls = kit.drive(decoder_calls, _layer_init(c), c.N, decoder_state(kit, c), args)
        got_order = [i for i, _, _ in calls]
        if order and got_order != list(range(c.N)):
            raise Fail(t("{label}: your Decoder called its layers in the order {order}; each of the N={N} layers "
                         "runs once, in order: for layer in self.layers: ...", label=c.label, order=got_order, N=c.N))
        for i, positional, keywords in calls:
            bound = signature.bind(None, *positional, **keywords).arguments
            for name, sent in zip(("memory", "tgt_mask", "memory_mask"), args[1:]):
                if name not in names:
                    continue
                got = bound.get(name)
                same = got is None if sent is None else (
                    isinstance(got, torch.Tensor) and got.shape == sent.shape and torch.equal(got, sent))
                if not same:
                    what = t("a tensor of shape {shape}", shape=tuple(got.shape)) if isinstance(got, torch.Tensor) \
                        else repr(got)
                    raise Fail(t("{label}: decoder layer {i} received as {name} {what}, not the Decoder's own {name}: "
                                 "pass the same {name} to every layer, y, _, _ = layer(y, memory, tgt_mask, memory_mask)",
                                 label=c.label, i=i, name=name, what=what))


# The masks belong to masking; which tensor is the memory, and the order of the layers, are wiring:
# a wiring mistake fails numerics (diagnosed there) and this property, never a masking check.
@check("masking", "Decoder: every layer receives tgt_mask and memory_mask")
def decoder_layer_masks(kit):
    _decoder_layer_calls(kit, ("tgt_mask", "memory_mask"), order=False)


@check("properties", "Decoder: every layer runs once, in order, and reads the encoder memory")
def decoder_layer_calls(kit):
    _decoder_layer_calls(kit, ("memory",), order=True)


@check("shapes", "Decoder returns y (B, T_t, D) on every case")
def decoder_shapes(kit):
    for c in _DECODER_CASES:
        got = kit.user(decoder_inputs(c), target="Decoder", init=decoder_init(c), state=decoder_state(kit, c))
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != (c.B, c.T_t, c.D):
            shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            raise Fail(t("{label}: Decoder.forward should return one tensor of shape (B, T_t, D) = {want}, got "
                         "{shape} (the layers return tuples: unpack them, y, _, _ = layer(...))", label=c.label,
                         want=(c.B, c.T_t, c.D), shape=shape))


@check("numerics", "Decoder matches the reference in float64 and in float32")
def decoder_numerics(kit):
    for dtype in ("float64", "float32"):
        for c in _DECODER_CASES:
            args, state = decoder_inputs(c, dtype), decoder_state(kit, c, dtype)
            got = kit.user(args, target="Decoder", init=decoder_init(c), state=state, dtype=dtype)
            want = kit.reference(args, target="Decoder", init=decoder_init(c), state=state, dtype=dtype)
            try:
                compare(got, want, "y", "(B, T_t, D)")
            except Fail as fail:
                found = _diagnose(kit, c, args, state, dtype, got)
                raise Fail(t("{label}, {dtype}: {fail}", label=c.label, dtype=dtype, fail=fail), found,
                           line=kit.divergence_line if found else None) from None


@check("properties", "Encoder and Decoder work with the layers given in the file (training mode, dropout on)")
def with_given_layers(kit):
    for kind, c, args in (("Encoder", CASES[0], inputs(CASES[0], "float64")),  # no mask
                          ("Encoder", CASES[1], inputs(CASES[1], "float64")),
                          ("Decoder", _DECODER_CASES[1], decoder_inputs(_DECODER_CASES[1]))):
        _given_layers_agree(kit, kind, c, args, "")


@check("properties", "the given layers, stacked: a batch item that is all PAD gives no NaN", followup=True)
def with_given_layers_all_pad(kit):
    # Beyond the textbook answer: batch item 0 is all PAD, so its queries see no key at all. The given
    # layers give such a query zero weights; a NaN there means they were changed (the interview tutorial's -inf alone).
    x, src_mask = inputs(CASES[1], "float64")
    src_mask = src_mask.clone()
    src_mask[0] = False
    _given_layers_agree(kit, "Encoder", CASES[1], (x, src_mask), t(
        " Here batch item 0 is all PAD, so its queries see no key. Follow-up: what should such a query return? "
        "A NaN there spreads to the whole batch through the loss and its gradients; the given MultiHeadAttention "
        "gives it zero weights (weights.masked_fill(~mask, 0.0) after softmax)"))


def _given_layers_agree(kit, kind, c, args, edge: str) -> None:
    layer_init = {**_layer_init(c), "dropout": 0.5}
    state = kit.state(c, "float64") if kind == "Encoder" else decoder_state(kit, c)
    got = kit.drive(with_own_layers, kind, layer_init, c.N, state, args)
    layer_class = getattr(kit.solution, "EncoderLayer" if kind == "Encoder" else "DecoderLayer")
    stack = getattr(kit.solution, kind)(layer_class(**layer_init), c.N).double()
    stack.load_state_dict(state, strict=True)
    stack.train()
    torch.manual_seed(0)  # the same dropout masks as the child draws
    with torch.no_grad():
        want = stack(*args)
    if not (isinstance(got, torch.Tensor) and matches(got, want)):
        nan = t(" Your result holds NaN.") if isinstance(got, torch.Tensor) and got.isnan().any() else ""
        raise Fail(t("{label}: built around the {layer} given in your file, with dropout=0.5 in training mode, your "
                     "{kind} does not give the reference's result.{nan} If the numerics checks pass, the given classes "
                     "were changed: keep them exactly as given.{edge}", label=c.label, layer=layer_class.__name__,
                     kind=kind, nan=nan, edge=edge))


def _tensor(value, c):
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != (c.B, c.T_s, c.D):
        shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        raise Fail(t("{label}: Encoder.forward should return one tensor of shape (B, T_s, D) = {want}, got {shape} "
                     "(the layers return tuples: unpack them, x, _ = layer(x, src_mask))", label=c.label,
                     want=(c.B, c.T_s, c.D), shape=shape))
    return value


def _layer_init(c):
    return {"d_model": c.D, "num_heads": c.H, "d_ff": c.d_ff}


def _diagnose(kit, c, args, state, dtype, got):
    found = kit.name_mistake(args, got, _DECODER_MISTAKES, init=decoder_init(c), state=state, dtype=dtype)
    if found or dtype != "float64":
        return found
    try:  # the Decoder's layers and norm, recorded: the first whose input differs
        found = kit.first_divergence(c, target="Decoder", init=decoder_init(c), state=state, args=args)
    except (Fail, UserError):
        return None
    kit.diagnosis = kit.diagnosis or found
    return found
