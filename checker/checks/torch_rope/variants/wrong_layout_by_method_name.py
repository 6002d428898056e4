# expect: does not catch your AttributeError
"""Each layout is a helper looked up by its name, so an unknown layout fails inside the lookup with an
AttributeError, not with the ValueError the contract promises (a dispatch seen in model code that picks a
rotation by config string)."""

import sys

import torch
from torch import Tensor


def _pairs_half(x: Tensor):
    return x.chunk(2, dim=-1)


def _join_half(a: Tensor, b: Tensor) -> Tensor:
    return torch.cat([a, b], dim=-1)


def _pairs_interleaved(x: Tensor):
    return x[..., 0::2], x[..., 1::2]


def _join_interleaved(a: Tensor, b: Tensor) -> Tensor:
    return torch.stack([a, b], dim=-1).flatten(-2)


def apply_rope(x: Tensor, positions: Tensor, layout: str = "half", base: float = 10000.0) -> Tensor:
    module = sys.modules[__name__]
    pairs, join = getattr(module, f"_pairs_{layout}"), getattr(module, f"_join_{layout}")
    d_k = x.size(-1)
    theta = base ** (-torch.arange(0, d_k, 2, dtype=x.dtype, device=x.device) / d_k)
    angle = positions.to(x.dtype)[:, None] * theta
    cos, sin = angle.cos(), angle.sin()
    a, b = pairs(x)
    return join(a * cos - b * sin, a * sin + b * cos)
