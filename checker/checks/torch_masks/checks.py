"""Hidden checks: padding, subsequent (causal), decoder and cross-attention masks.

TARGET (make_pad_mask) goes through the standard checks; the other three functions are
checked below with kit.user(args, target=...) and compared exactly, each with its own
named mistakes.
"""

import torch

from checker.kit import DEVICE_MISMATCH, Accepted, Fail, Mistake, case, check, compare, expect_structure, matches, UserError
from checker.lang import joined, t

TARGET = "make_pad_mask"
DEVICE = True  # masks or positions are built inside: they must follow the inputs' device
GRADIENTS = False  # masks are bool: nothing to differentiate
OUTPUTS = [("mask", "(B, 1, 1, T)")]

# Every dimension its own size; PAD at the end with a different length per batch item;
# case 3 uses pad_id=3 and has real tokens equal to 0.
CASES = [
    case(1, B=2, T=5, pad_id=0),
    case(2, B=3, T=7, pad_id=0),
    case(3, B=4, T=6, pad_id=3),
]
_SUBSEQUENT_CASES = [case(11, T=5), case(12, T=1), case(13, T=7, device="cpu")]
# case 23 pads on the left (batched generation): with padding only at the end, a padding mask put on
# the query axis hides the same cells as one on the key axis.
_DECODER_CASES = [case(21, B=2, T_t=6, pad_id=0), case(22, B=3, T_t=5, pad_id=2), case(23, B=3, T_t=6, pad_id=0, side="left")]
# T_t < T_s and T_t > T_s: a swapped axis or a mask built from the target cannot pass.
_CROSS_CASES = [case(31, B=2, T_s=7, T_t=4, pad_id=0), case(32, B=3, T_s=5, T_t=6, pad_id=1)]

_VOCAB = 20


def tokens(c, B, T, salt=0):
    """(B, T) ids in [0, VOCAB) without pad_id, then PAD at the end, a different length per item."""
    g = c.generator(salt)
    ids = torch.randint(0, _VOCAB - 1, (B, T), generator=g)
    ids = ids + (ids >= c.pad_id).long()  # skip pad_id
    if c.pad_id != 0:
        ids[0, 0] = 0  # a real token equal to 0: "tokens != 0" is wrong here
    lengths = torch.randperm(T, generator=g)[:B].clamp(min=1) if B <= T else torch.randint(1, T + 1, (B,), generator=g)
    lengths[-1] = T  # one item has no padding
    lengths[0] = max(1, T - 2)  # one item has at least two PAD
    ids[torch.arange(T) >= lengths[:, None]] = c.pad_id
    return ids


def inputs(c, dtype):
    return tokens(c, c.B, c.T), c.pad_id


def subsequent_args(c):
    return (c.T, c.device) if "device" in c.extra else (c.T,)


def decoder_args(c):
    ids = tokens(c, c.B, c.T_t)
    return (ids.flip(-1) if c.extra.get("side") == "left" else ids), c.pad_id


def cross_args(c):
    return tokens(c, c.B, c.T_s, salt=1), tokens(c, c.B, c.T_t, salt=2), c.pad_id


# ----------------------------------------------------------------------------- named mistakes


def _pad(tokens, pad_id=0):
    return (tokens != pad_id)[:, None, None, :]


def _tril(T, diagonal=0):
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal).view(1, 1, T, T)


def _triu(T, diagonal):
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal).view(1, 1, T, T)


def _full(mask, B, T_q, T_k):
    return mask.expand(B, 1, T_q, T_k)


MISTAKES = [
    Mistake("tokens > pad_id", lambda t, p=0: (t > p)[:, None, None, :],
            "your mask keeps tokens > pad_id: a real token may have a smaller id than pad_id (pad_id=3 and "
            "token 0); compare with !="),
    Mistake("pad mask inverted", lambda t, p=0: (t == p)[:, None, None, :],
            "your mask is True at the PAD positions: True means 'may attend', so use tokens != pad_id"),
    Mistake("pad mask (B, T)", lambda t, p=0: t != p,
            "your mask has shape (B, T): add the head and query axes, (tokens != pad_id)[:, None, None, :] "
            "gives (B, 1, 1, T)"),
    Mistake("pad mask (B, 1, T)", lambda t, p=0: (t != p).unsqueeze(1),
            "your mask has shape (B, 1, T), like the PyTorch notebook tutorial's make_src_mask (its attention adds the head axis itself): "
            "return (B, 1, 1, T), e.g. (tokens != pad_id).unsqueeze(1).unsqueeze(2)"),
    Mistake("pad mask on the query axis", lambda t, p=0: (t != p)[:, None, :, None],
            "your mask has shape (B, 1, T, 1), which hides queries: padding hides KEYS, so T goes last: (B, 1, 1, T)"),
    Mistake("pad mask float", lambda t, p=0: _pad(t, p).float(),
            "your mask is a float 0/1 tensor: return a bool tensor (tokens != pad_id already is one)"),
    Mistake("pad mask long", lambda t, p=0: _pad(t, p).long(),
            "your mask is an integer 0/1 tensor: return a bool tensor (tokens != pad_id already is one)"),
]

_SUBSEQUENT_MISTAKES = [
    Mistake("upper triangle", lambda T, device=None: _triu(T, 1),
            "your mask is True above the diagonal, on the future: that is the 1 = masked convention of the paper walkthrough "
            "(np.triu(..., k=1)); here True = may attend, so use torch.tril (or ~torch.triu(..., diagonal=1))"),
    Mistake("upper triangle with diagonal", lambda T, device=None: _triu(T, 0),
            "your mask is the upper triangle: query i must see keys 0..i, the LOWER triangle: torch.tril"),
    Mistake("diagonal hidden", lambda T, device=None: _tril(T, -1),
            "your mask hides the diagonal, so position i cannot attend to itself (tril(diagonal=-1) or "
            "~triu(diagonal=0)): keep the diagonal, torch.tril(ones) or ~torch.triu(ones, diagonal=1)"),
    Mistake("(T, T)", lambda T, device=None: _tril(T)[0, 0],
            "your mask has shape (T, T): add the batch and head axes, .view(1, 1, T, T)"),
    Mistake("(1, T, T)", lambda T, device=None: _tril(T)[0],
            "your mask has shape (1, T, T), like the PyTorch notebook tutorial: add the head axis too, (1, 1, T, T)"),
    Mistake("float", lambda T, device=None: _tril(T).float(),
            "your mask is a float 0/1 tensor (the interview tutorial's torch.tril(torch.ones(T, T))): "
            "create it as bool, torch.ones(T, T, dtype=torch.bool).tril()"),
]

_DECODER_MISTAKES = [
    Mistake("no padding part", lambda t, p=0: _tril(t.size(1)),
            "your mask has no padding part: AND the subsequent mask with the padding mask of tgt"),
    Mistake("no padding part, expanded", lambda t, p=0: _full(_tril(t.size(1)), t.size(0), t.size(1), t.size(1)),
            "your mask has no padding part: AND the subsequent mask with the padding mask of tgt"),
    Mistake("no causal part", lambda t, p=0: _pad(t, p),
            "your mask has no causal part: AND the padding mask with make_subsequent_mask(T_t)"),
    Mistake("no causal part, expanded", lambda t, p=0: _full(_pad(t, p), t.size(0), t.size(1), t.size(1)),
            "your mask has no causal part: AND the padding mask with make_subsequent_mask(T_t)"),
    Mistake("or", lambda t, p=0: _pad(t, p) | _tril(t.size(1)),
            "your mask joins padding and causal with | (OR): a key must be real AND not in the future, use &"),
    Mistake("(B, T, T)", lambda t, p=0: (_pad(t, p) & _tril(t.size(1)))[:, 0],
            "your mask has shape (B, T_t, T_t), like the PyTorch notebook tutorial's make_tgt_mask (its attention adds the head axis): "
            "add it here, (B, 1, T_t, T_t)"),
    Mistake("padding part inverted", lambda t, p=0: (t == p)[:, None, None, :] & _tril(t.size(1)),
            "the padding part of your mask is True at the PAD positions: True means 'may attend', use tgt != pad_id"),
    Mistake("causal part inverted", lambda t, p=0: _pad(t, p) & _triu(t.size(1), 1),
            "the causal part of your mask is the upper triangle: True = may attend, so use the lower triangle (tril)"),
    Mistake("diagonal hidden", lambda t, p=0: _pad(t, p) & _tril(t.size(1), -1),
            "your mask hides the diagonal, so a position cannot attend to itself: tril with diagonal=0"),
    Mistake("pad_id ignored", lambda t, p=0: _pad(t, 0) & _tril(t.size(1)),
            "your mask ignores pad_id and compares with 0: pass pad_id on to the padding mask"),
    Mistake("padding on the query axis", lambda t, p=0: (t != p)[:, None, :, None] & _tril(t.size(1)),
            "the padding part of your mask is on the QUERY axis, (B, 1, T_t, 1): it must hide padded KEYS, "
            "(B, 1, 1, T_t); with padding only at the end the two agree, with left padding they do not"),
    Mistake("float", lambda t, p=0: (_pad(t, p) & _tril(t.size(1))).float(),
            "your mask is a float 0/1 tensor: keep it bool (combine bool masks with &, not *)"),
]


def _cross_full(s, t, p=0):
    return _full(_pad(s, p), s.size(0), t.size(1), s.size(1))


_CROSS_MISTAKES = [
    Mistake("built from the target", lambda s, t, p=0: _full(_pad(t, p), t.size(0), t.size(1), t.size(1)),
            "your mask is built from the target tokens: in cross-attention the keys are the SOURCE (encoder) tokens, "
            "use src != pad_id, shape (B, 1, T_t, T_s)"),
    Mistake("not materialized", lambda s, t, p=0: _pad(s, p),
            "your mask has shape (B, 1, 1, T_s): right values, but the contract wants it for every target query, "
            ".expand(B, 1, T_t, T_s)"),
    Mistake("axes swapped", lambda s, t, p=0: _cross_full(s, t, p).transpose(-1, -2),
            "your mask has the source on the query axis, (B, 1, T_s, T_t): queries come from the target, "
            "keys from the source: (B, 1, T_t, T_s)"),
    Mistake("causal part", lambda s, t, p=0: _cross_full(s, t, p) & torch.ones(t.size(1), s.size(1), dtype=torch.bool).tril(),
            "your cross mask has a causal part: a decoder position may look at EVERY source position; "
            "hide only the source PAD"),
    Mistake("T_t on the head axis", lambda s, t, p=0: _cross_full(s, t, p).transpose(1, 2),
            "your mask has shape (B, T_t, 1, T_s): the target queries went to the head axis (axis 1); keep the head "
            "axis at size 1 and put T_t on axis 2, (B, 1, T_t, T_s)"),
    Mistake("(B, T_t, T_s)", lambda s, t, p=0: _cross_full(s, t, p)[:, 0],
            "your mask has shape (B, T_t, T_s), like the PyTorch notebook tutorial's masks (its attention adds the head axis): "
            "add it here, (B, 1, T_t, T_s)"),
    Mistake("inverted", lambda s, t, p=0: _full((s == p)[:, None, None, :], s.size(0), t.size(1), s.size(1)),
            "your mask is True at the source PAD positions: True means 'may attend', so use src != pad_id"),
    Mistake("pad_id ignored", lambda s, t, p=0: _cross_full(s, t, 0),
            "your mask ignores pad_id and compares with 0: use the pad_id argument"),
    Mistake("float", lambda s, t, p=0: _cross_full(s, t, p).float(),
            "your mask is a float 0/1 tensor: return a bool tensor"),
]


# The interview tutorial's make_pad_mask(q_pad, k_pad) also hides the rows of PAD queries. The masks differ from the
# reference only on those rows, whose outputs the loss ignores: an accepted variant, named in the report.
# Both explanations end with the same reason; each is one whole sentence, so that it is translated whole.
_DECODER_SEED003 = Mistake(
    "query padding too (the interview tutorial)", lambda t, p=0: _pad(t, p) & _pad(t, p).transpose(-1, -2) & _tril(t.size(1)),
    "your decoder mask also hides the rows of PAD queries, as the interview tutorial's make_pad_mask does (visible = real query "
    "AND real key): the masks differ only on the rows of PAD queries, whose outputs the loss ignores. This catalogue "
    "hides keys only, so a PAD query still attends like any other and no row is left with nothing to see")
_CROSS_SEED003 = Mistake(
    "target queries hidden (the interview tutorial)", lambda s, t, p=0: _cross_full(s, t, p) & _pad(t, p).transpose(-1, -2),
    "your cross mask also hides the rows of PAD target queries (make_pad_mask(T_t, T_s, tgt_pad, src_pad)), as "
    "the interview tutorial's make_pad_mask does (visible = real query AND real key): the masks differ only on the rows of PAD queries, "
    "whose outputs the loss ignores. This catalogue hides keys only, so a PAD query still attends like any other and "
    "no row is left with nothing to see")


# ----------------------------------------------------------------------------- checks

_SIGNATURES = {
    "make_pad_mask": ["tokens", "pad_id"],
    "make_subsequent_mask": ["T", "device"],
    "make_decoder_mask": ["tgt", "pad_id"],
    "make_cross_mask": ["src", "tgt", "pad_id"],
}


@check("structure", "the four mask functions exist with their documented parameters")
def structure(kit):
    for name, params in _SIGNATURES.items():
        expect_structure(kit, name, module=False, params=params)


def _verify(kit, target, cases, make_args, legend, mistakes, accepted=None):
    """Compare target's result with the reference, exactly; name the mistake it equals. A result that equals
    accepted (a source's convention) wherever it differs from the reference passes, with accepted's note."""
    followed = False
    for c in cases:
        args = make_args(c)
        got = kit.user(args, target=target)
        want = kit.reference(args, target=target)
        try:
            compare(got, want, target + _shown(args), legend, exact=True)
        except Fail as fail:
            if accepted is not None and isinstance(got, torch.Tensor) and matches(got, accepted.impl(*args)):
                followed = True
                continue
            found = kit.name_mistake(args, got, mistakes)
            raise Fail(t("{label}: {fail}", label=c.label, fail=fail.message), found or fail.diagnosis) from None
    if followed:
        raise Accepted(t(accepted.explain))




def _shown(args) -> str:
    parts = [t("tokens {shape}", shape=tuple(a.shape)) if isinstance(a, torch.Tensor) else repr(a) for a in args]
    return "(" + joined(", ", parts) + ")"


@check("masking", "make_pad_mask(tokens) is (B, 1, 1, T) bool, True at the real tokens, for any pad_id")
def pad(kit):
    _verify(kit, TARGET, CASES, lambda c: inputs(c, "float64"), OUTPUTS[0][1], MISTAKES)


@check("masking", "make_subsequent_mask(T) is (1, 1, T, T) bool, True on and below the diagonal")
def subsequent(kit):
    _verify(kit, "make_subsequent_mask", _SUBSEQUENT_CASES, subsequent_args, "(1, 1, T, T)", _SUBSEQUENT_MISTAKES)


@check("masking", "make_decoder_mask(tgt) is (B, 1, T_t, T_t): key padding AND no look-ahead")
def decoder(kit):
    _verify(kit, "make_decoder_mask", _DECODER_CASES, decoder_args, "(B, 1, T_t, T_t)", _DECODER_MISTAKES,
            _DECODER_SEED003)


@check("masking", "make_cross_mask(src, tgt) is (B, 1, T_t, T_s): real source keys, for every target query")
def cross(kit):
    _verify(kit, "make_cross_mask", _CROSS_CASES, cross_args, "(B, 1, T_t, T_s)", _CROSS_MISTAKES, _CROSS_SEED003)


@check("properties", "masks follow the device asked for: make_subsequent_mask(T, device) and the tokens' device")
def mask_devices(kit):
    c = _SUBSEQUENT_CASES[0]
    for target, args in (("make_subsequent_mask", (c.T, "meta")), ("make_decoder_mask", decoder_args(_DECODER_CASES[0])),
                         ("make_cross_mask", cross_args(_CROSS_CASES[0]))):
        try:
            layout = kit.layout(args, target=target, dtype=None)
        except UserError as err:
            if err.not_implemented:
                raise
            if not any(word in err.text for word in DEVICE_MISMATCH):
                continue  # an operation the meta device lacks (.item() in a loop): no verdict either way
            raise Fail(t("{target} with the tokens on the meta device raised: {error}", target=target,
                         error=err.text.splitlines()[0]), t(_DEVICE_WHY)) from None
        stray = [entry["device"] for entry in layout if entry and entry["device"] != "meta"]
        if stray:
            raise Fail(t("{target}{args} on the meta device returned a mask on {device}", target=target,
                         args=_shown(args), device=stray[0]), t(_DEVICE_WHY))


_DEVICE_WHY = ("a mask made inside ignores the device: pass device on to torch.ones (make_subsequent_mask(T, "
               "device) uses its argument; make_decoder_mask passes device=tgt.device), or the model fails on a GPU")


@check("hygiene", "no mask function modifies its token tensors")
def tokens_unchanged(kit):
    for target, cases, make_args in (("make_decoder_mask", _DECODER_CASES, decoder_args),
                                     ("make_cross_mask", _CROSS_CASES, cross_args)):
        for c in cases:
            sent = make_args(c)
            _, after = kit.user(sent, target=target, return_args=True)
            for i, (before, now) in enumerate(zip(sent, after)):
                if isinstance(before, torch.Tensor):
                    try:
                        compare(now, before, t("argument {number}", number=i + 1), exact=True)
                    except Fail as fail:
                        raise Fail(t("{target}, {label}: your code modified its input ({fail}); build the mask out "
                                     "of place (tokens != pad_id), never assign into tokens", target=target,
                                     label=c.label, fail=fail)) from None
