"""The masks the attention katas' cases are given, and the probe that a causal mask hides the future.

Written once for both tracks: masks are built as torch bool tensors (True = may attend), from the case's
seeded generator, and a NumPy kata takes them with numpy=True; the probe runs the user's code on tensors or
arrays alike. The random stream is part of each kata's contract: the same case must give the same mask, so
the draws below are made in the order the katas have always made them.
"""

import re
from typing import NamedTuple

import numpy as np
import torch

BLIND = (1, 0, 2)  # batch item 1, head 0, query 2: the query a case "one query sees nothing" leaves blind


def pad_lengths(g: torch.Generator, B: int, T: int, shortest: int = 1, longest: int | None = None,
                one_full: bool = False) -> torch.Tensor:
    """B sequence lengths drawn from shortest..longest (longest: T unless given), then batch item 0's set to
    T - 2, so that padding really happens, and with one_full the last item's to T, so that one has none."""
    lengths = torch.randint(shortest, (T if longest is None else longest) + 1, (B,), generator=g)
    lengths[0] = T - 2
    if one_full:
        lengths[-1] = T
    return lengths


def padding(g: torch.Generator, B: int, T: int, **lengths) -> torch.Tensor:
    """(B, T) bool, True at the real tokens of right-padded sequences of pad_lengths(g, B, T, **lengths)."""
    return torch.arange(T) < pad_lengths(g, B, T, **lengths)[:, None]


def causal(T_q: int, T_k: int) -> torch.Tensor:
    """(T_q, T_k) bool: query i sees keys 0..i."""
    return torch.ones(T_q, T_k, dtype=torch.bool).tril()


def _shape(c) -> tuple[int, ...]:
    """The shape c.mask names in parentheses, "padding (B, 1, 1, T_k)", in c's sizes."""
    found = re.search(r"\(([^)]*)\)", c.mask)
    if not found:
        raise ValueError(f"case {c.id}: the mask {c.mask!r} names no shape, such as (B, 1, 1, T_k)")
    return tuple(int(n) if n.isdigit() else c.dims[n] for n in found[1].split(", "))


def case_mask(c, shortest: int = 1, longest: int | None = None, one_full: bool = False, blind: tuple = BLIND,
              numpy: bool = False):
    """The mask case c's label names, "KIND (SHAPE)", in that SHAPE (its names are c's sizes, its last the keys),
    True = may attend, or None for "none". KIND, the label's first word:

    - padding: right padding of the keys, pad_lengths(shortest, longest, one_full) long;
    - causal: query i sees keys 0..i;
    - decoder: both (the keys' padding and the causal mask), (B, 1, T_q, T_k);
    - anything else: random, 60% of the keys visible and key 0 always, except that in a label with "nothing"
      in it (", one query sees nothing") the query at index blind sees no key at all.

    The random stream is c.generator(salt=1), one draw: the lengths, or the random mask. numpy=True gives an
    np.ndarray (the NumPy katas' masks)."""
    kind = c.mask.split()[0]
    g = c.generator(salt=1)
    if kind == "none":
        return None
    shape = _shape(c)
    lengths = {"shortest": shortest, "longest": longest, "one_full": one_full}
    if kind == "padding":
        mask = padding(g, c.B, shape[-1], **lengths).view(shape)
    elif kind == "causal":
        mask = causal(*shape[-2:]).view(shape)
    elif kind == "decoder":
        mask = padding(g, c.B, shape[-1], **lengths).view(*shape[:-2], 1, shape[-1]) & causal(*shape[-2:])
    else:
        mask = torch.rand(*shape, generator=g) < 0.6
        mask[..., 0] = True  # every query sees something ...
        if "nothing" in c.mask:
            mask[blind] = False  # ... except this one
    return mask.numpy() if numpy else mask


# ----------------------------------------------------------------------------- does the future leak?


def equal(before, after) -> bool:
    """Exactly equal (tensors or arrays): the default of future_leak."""
    return torch.equal(before, after) if isinstance(before, torch.Tensor) else np.array_equal(before, after)


def close(rtol: float, atol: float):
    """Equal within allclose's rtol and atol (tensors or arrays): a `same` for future_leak."""
    def same(before, after) -> bool:
        allclose = torch.allclose if isinstance(before, torch.Tensor) else np.allclose
        return allclose(before, after, rtol=rtol, atol=atol)
    return same


def noise(pos: int, shape: tuple):
    """A seeded change of the future of position pos, a shift for future_leak: 3 N(0, 1), drawn from pos."""
    return 3.0 * np.random.default_rng(pos).standard_normal(shape)


class Leak(NamedTuple):
    pos: int  # the inputs after pos were changed ...
    which: int  # ... and run's output number `which` (0 when it returns one) moved at a position <= pos:
    before: object  # that output up to pos, from the inputs as given
    after: object  # and from the changed inputs


def _on(axis: int, cut: slice) -> tuple:
    """The index that takes cut on axis, written as the katas write it: x[:, cut], or x[..., cut, :] for axis -2."""
    if axis < 0:
        return (..., cut) + (slice(None),) * (-axis - 1)
    return (slice(None),) * axis + (cut,)


def future_leak(run, inputs: tuple, shifts: tuple, *, axis: int = 1, same=equal, before=None) -> Leak | None:
    """Under a causal mask, changing the inputs after position pos must leave the output up to pos as it was.

    For pos = 0 .. T - 2 (T: the positions of the inputs), in turn: shifts[n] is added to inputs[n] after pos,
    run(*changed) is called and its output(s) compared, up to pos, with run(*inputs) (before, when the caller
    has it already) by same(before, after). axis: the positions' axis, of the inputs and of every output.
    A shift is a number or a function (pos, shape) -> an array of that shape, such as noise.

    The first Leak found, for the caller to say in its own words, or None: the future does not leak."""
    before = run(*inputs) if before is None else before
    befores = before if isinstance(before, tuple) else (before,)
    for pos in range(inputs[0].shape[axis] - 1):
        future, past = _on(axis, slice(pos + 1, None)), _on(axis, slice(None, pos + 1))
        changed = [x.clone() if isinstance(x, torch.Tensor) else x.copy() for x in inputs]
        for x, shift in zip(changed, shifts):
            x[future] += shift(pos, x[future].shape) if callable(shift) else shift
        after = run(*changed)
        for which, (u, v) in enumerate(zip(befores, after if isinstance(after, tuple) else (after,))):
            if not same(u[past], v[past]):
                return Leak(pos, which, u[past], v[past])
    return None
