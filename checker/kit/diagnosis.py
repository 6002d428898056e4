"""Named mistakes, and which of them (or which sum of the inputs) a wrong result equals."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from checker.kit.compare import floating, matches

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

