"""Named mistakes, and which of them (or which sum of the inputs) a wrong result equals."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from checker.kit.compare import floating, matches
from checker.lang import t

@dataclass(frozen=True)
class Mistake:
    """A realistic wrong version: impl behaves like the mistaken code, explain says what to fix."""

    name: str
    impl: object
    explain: str


MEMORY_NAMES = ("memory", "encoder_output", "enc_output")  # a layer input that is the encoder's output


def identify(value, candidates: list) -> str | None:
    """Which candidate (a description, a tensor) value equals, or which sum of two of them."""
    if not isinstance(value, (torch.Tensor, np.ndarray)):
        return None
    same_shape = [(d, c) for d, c in candidates if type(c) is type(value) and c.shape == value.shape
                  and floating(c) == floating(value)]
    for description, candidate in same_shape:
        if matches(value, candidate):
            return description
    if not floating(value):
        return None  # a mask: equal to one of the inputs, or to nothing nameable
    for i, (a, x) in enumerate(same_shape):
        for b, y in same_shape[i + 1:]:
            if matches(value, x + y):
                return a + " + " + b
    for a, x in same_shape:  # a sign slip: x - y
        for b, y in same_shape:
            if a != b and matches(value, x - y):
                return a + " − " + b
    return None


def unused_argument(kit, name: str, calls: tuple) -> Fail | None:
    """A relation that needs no named mistake: the user's code gives bit for bit the same result for calls that
    differ only in argument name, whose reference results differ. Then the argument has no effect (a value fixed
    in the code replaces it), a fact whatever the fixed value is. calls: ((call, shown), ...), each call the
    keywords of Kit.user: {"args": ...} for a function, plus "init" and "state" for a module built with the
    argument. Give a value far above the others among them: an argument used only past a threshold
    (max(std, eps)) changes nothing between two small values, and is used all the same."""
    from checker.kit.authoring import Fail
    from checker.errors import UserError

    try:
        results = [kit.user(**call) for call, _ in calls]
    except UserError as err:
        if err.not_implemented:
            raise  # a stub: not started, not passed
        return None  # a call that raises: the other checks say why
    if not all(identical(results[0], other) for other in results[1:]):
        return None
    return Fail(t("{name} = {values} give exactly the same result, where the reference's differ: your code "
                  "does not use its {name} argument", name=name, values=", ".join(shown for _, shown in calls)),
                t("the {name} argument has no effect: a value written into the code (1e-5 as in nn.LayerNorm, 1e-12 "
                  "as in BERT, or the default itself) replaces it; use the argument the caller passes", name=name))


def identical(a, b) -> bool:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and bool(np.array_equal(a, b))
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.equal(a, b))
    return False
