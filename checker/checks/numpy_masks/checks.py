"""Hidden checks: NumPy padding and look-ahead (causal) masks.

Two functions and bool outputs, so there is no OUTPUTS: the float32/float64 standard checks would
mean nothing here. The checks below cover shape, dtype, values and hygiene for each function.
"""

import numpy as np
import torch

from checker.lang import t
from checker.kit import Fail, Mistake, case, check, compare, describe, expect_structure, shape_relation

TARGET = "make_pad_mask"

# Every dimension its own size. pad_id is a setting, not a size: case 2 uses pad_id=1 and has
# token 0 as a real word, so code that hard-codes 0 fails; case 3 pads on the left.
CASES = [
    case(1, B=3, T=7, pad_id="0", padding="right"),
    case(2, B=2, T=5, pad_id="1", padding="right, token 0 is a real word"),
    case(3, B=4, T=6, pad_id="0", padding="left"),
    case(7, B=1, T=4, pad_id="0", padding="right"),  # the contract's smallest batch: one sequence
]
_CAUSAL_CASES = [case(4, T=5), case(5, T=1), case(6, T=8)]

_VOCAB = 20


def inputs(c, dtype=None):
    """(tokens, pad_id): tokens (B, T) int64, real ids drawn from the vocabulary minus pad_id."""
    g = c.generator()
    pad_id = int(c.pad_id)
    tokens = torch.randint(0, _VOCAB - 1, (c.B, c.T), generator=g)
    tokens = tokens + (tokens >= pad_id).long()  # every id but pad_id
    if "token 0" in c.padding:
        tokens[:, 0] = 0  # a real word whose id is 0
    lengths = torch.randint(1, c.T + 1, (c.B,), generator=g)
    lengths[0], lengths[-1] = c.T, c.T - 2  # one row without padding, one with two PADs (alone: two PADs)
    position = torch.arange(c.T)
    pad = position >= lengths[:, None] if c.padding.startswith("right") else position < (c.T - lengths)[:, None]
    return tokens.masked_fill(pad, pad_id).numpy(), pad_id


# ----------------------------------------------------------------------------- named mistakes
# Value mistakes are matched on the mask's truth values; shape and dtype mistakes are named by the
# shapes checks (_pad_form, _causal_form), which see the exact shape and dtype.


def _expand(real):
    return real[:, None, None, :]


_PAD_MISTAKES = [
    Mistake("PAD marked True", lambda tokens, pad_id=0: _expand(tokens == pad_id),
            "your mask is True at the PAD tokens: True means 'a real token, may be attended to'; use tokens != pad_id"),
    Mistake("tokens > pad_id", lambda tokens, pad_id=0: _expand(tokens > pad_id),
            "your mask keeps tokens > pad_id: a real token may have a smaller id than pad_id (pad_id=3 and "
            "token 0); compare with !="),
    Mistake("pad_id ignored", lambda tokens, pad_id=0: _expand(tokens != 0),
            "your mask treats id 0 as PAD whatever pad_id says: compare with pad_id (tokens != pad_id)"),
    Mistake("pad_id ignored, inverted", lambda tokens, pad_id=0: _expand(tokens == 0),
            "your mask is True where the id is 0: compare with pad_id, and True marks real tokens (tokens != pad_id)"),
]

_CAUSAL_MISTAKES = [
    Mistake("diagonal hidden", lambda T: np.tril(np.ones((T, T), dtype=bool), k=-1),
            "your mask hides the diagonal: query i must see itself, so keep k=0 (np.tril(np.ones((T, T), dtype=bool)))"),
    Mistake("inverted (the paper walkthrough)", lambda T: np.triu(np.ones((T, T), dtype=bool), k=1),
            "your mask is True above the diagonal, the future: that is the paper walkthrough's create_causal_mask, where 1 means "
            "hidden; here True means visible, so take the lower triangle, np.tril(np.ones((T, T), dtype=bool))"),
    Mistake("shows the next position", lambda T: np.tril(np.ones((T, T), dtype=bool), k=1),
            "your causal mask also shows the key right after each query (np.tril(..., k=1)): query i sees keys "
            "0..i, np.tril with k=0"),
    Mistake("upper triangle", lambda T: np.triu(np.ones((T, T), dtype=bool)),
            "your mask is the upper triangle: query i sees keys i..T-1, the future; take the lower triangle, np.tril"),
    Mistake("inverted, diagonal hidden", lambda T: ~np.tril(np.ones((T, T), dtype=bool)),
            "your mask is True strictly above the diagonal and hides the diagonal: True means visible, "
            "so use np.tril(np.ones((T, T), dtype=bool)) (diagonal included)"),
    Mistake("nothing hidden", lambda T: np.ones((T, T), dtype=bool),
            "your mask hides nothing: query i must not see keys after i (np.tril)"),
]

MISTAKES = _PAD_MISTAKES + _CAUSAL_MISTAKES  # each list is matched against its own function

_DTYPE_HINT = ("return the bool array itself (tokens != pad_id and np.tril(np.ones((T, T), dtype=bool)) are bool), "
              "with True = visible; 0/1 float masks are the NumPy tutorial's and the paper walkthrough's additive convention (1 = hidden)")


def _truth(value, shape):
    """The mask's truth values in the expected shape, when they can be read (else None)."""
    if not isinstance(value, np.ndarray) or value.size != int(np.prod(shape)) or value.dtype.kind not in "biuf":
        return None
    return value.reshape(shape) != 0


def _values(kit, target, args, expected, mistakes, label):
    """Compare the truth values of the user's mask with expected; name the mistake if known."""
    got = kit.user(args, target=target)
    truth = _truth(got, expected.shape)
    if truth is None:
        return  # the shapes check reports it
    try:
        compare(truth, expected, t("{target}{call} (as True/False)", target=target, call=_call(args)), exact=True)
    except Fail as fail:
        found = kit.name_mistake(args, truth, mistakes, run=lambda m: m.impl(*args).reshape(expected.shape),
                                 same=np.array_equal)
        raise Fail(t("{label}: {fail}", label=label, fail=fail.message), found or fail.diagnosis) from None


def _call(args):
    shown = [f"tokens {tuple(a.shape)}" if isinstance(a, np.ndarray) else repr(a) for a in args]
    return f"({', '.join(shown)})"


# ----------------------------------------------------------------------------- checks


@check("structure", "make_pad_mask(tokens, pad_id) and make_causal_mask(T) are functions")
def structure(kit):
    expect_structure(kit, "make_pad_mask", module=False, params=["tokens", "pad_id"])
    expect_structure(kit, "make_causal_mask", module=False, params=["T"])


@check("shapes", "make_pad_mask returns a bool array (B, 1, 1, T)")
def pad_shape(kit):
    for c in CASES:
        got = kit.user(inputs(c), target="make_pad_mask")
        _pad_form(got, c)


def _pad_form(got, c):
    B, T = c.B, c.T
    if not isinstance(got, np.ndarray):
        raise Fail(t("{label}: make_pad_mask should return a NumPy array, got {got}", label=c.label, got=describe(got)))
    shape = tuple(got.shape)
    hints = {
        (B, T): "that is (B, T): add the head and query axes, real[:, None, None, :], so the mask broadcasts "
                "against the scores (B, H, T_q, T_k)",
        (B, 1, T): "that is (B, 1, T), the PyTorch notebook tutorial's make_src_mask (its attention adds the head axis later, with "
                   "mask.unsqueeze(1)); against scores (B, H, T_q, T_k) it would line B up with the head axis: "
                   "add both axes here, real[:, None, None, :]",
        (B, 1, T, 1): "the tokens sit on the query axis; padding hides KEYS, the last axis: (B, 1, 1, T)",
        (B, T, 1, 1): "the tokens sit on the head axis; padding hides KEYS, the last axis: (B, 1, 1, T)",
    }
    if shape != (B, 1, 1, T):
        hint = hints.get(shape, "")
        raise Fail(t("{label}: the mask should have shape (B, 1, 1, T) = {want}, got {got}", label=c.label,
                     want=(B, 1, 1, T), got=shape),
                   t(hint) if hint else shape_relation(shape, (B, 1, 1, T), "(B, 1, 1, T)"), general=not hint)
    if got.dtype != np.bool_:
        raise Fail(t("{label}: the mask should have dtype bool, got numpy.{dtype}", label=c.label, dtype=got.dtype),
                   t(_DTYPE_HINT))


@check("shapes", "make_causal_mask returns a bool array (T, T)")
def causal_shape(kit):
    for c in _CAUSAL_CASES:
        got = kit.user((c.T,), target="make_causal_mask")
        if not isinstance(got, np.ndarray):
            raise Fail(t("{label}: make_causal_mask should return a NumPy array, got {got}", label=c.label,
                         got=describe(got)))
        if tuple(got.shape) != (c.T, c.T):
            if got.size == c.T * c.T:
                raise Fail(t("{label}: the mask should have shape (T, T) = {want}, got {got}; return (T, T): "
                             "broadcasting adds the batch and head axes when the mask meets the scores",
                             label=c.label, want=(c.T, c.T), got=tuple(got.shape)),
                           shape_relation(tuple(got.shape), (c.T, c.T), "(T, T)"), general=True)
            raise Fail(t("{label}: the mask should have shape (T, T) = {want}, got {got}", label=c.label,
                         want=(c.T, c.T), got=tuple(got.shape)),
                       shape_relation(tuple(got.shape), (c.T, c.T), "(T, T)"), general=True)
        if got.dtype != np.bool_:
            raise Fail(t("{label}: the mask should have dtype bool, got numpy.{dtype}", label=c.label, dtype=got.dtype),
                       t(_DTYPE_HINT))


@check("masking", "make_pad_mask is True at real tokens and False at PAD (whatever pad_id is)")
def pad_values(kit):
    solution = kit.solution.make_pad_mask
    for c in CASES:
        args = inputs(c)
        _values(kit, "make_pad_mask", args, solution(*args), _PAD_MISTAKES, c.label)
    tokens, _ = inputs(CASES[0])
    _values(kit, "make_pad_mask", (tokens,), solution(tokens), _PAD_MISTAKES,
            t("{label}, called without pad_id (the default is pad_id=0)", label=CASES[0].label))


@check("masking", "make_causal_mask lets query i see keys 0..i, itself included")
def causal_values(kit):
    for c in _CAUSAL_CASES:
        _values(kit, "make_causal_mask", (c.T,), kit.solution.make_causal_mask(c.T), _CAUSAL_MISTAKES, c.label)


@check("hygiene", "make_pad_mask leaves the caller's tokens unchanged")
def hygiene(kit):
    for c in CASES:
        sent = inputs(c)
        _, after = kit.user(sent, target="make_pad_mask", return_args=True)
        try:
            compare(after[0], sent[0], "tokens", exact=True)
        except Fail as fail:
            raise Fail(t("{label}: your code modified its input ({fail}); build a new array (tokens != pad_id) instead "
                         "of writing into tokens", label=c.label, fail=fail)) from None
